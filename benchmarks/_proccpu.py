"""CPU seconds of the platform's own processes against the training's, read from /proc.

A figure that machine load cannot move much: CPU time, not wall time. A
sampler thread reads utime + stime (the process's own, not its children's)
of every process whose command line names a known part, every SAMPLE_S; a
process's CPU is its last reading minus its first (zero for one that
started during the run). A process that ends between two readings loses at
most SAMPLE_S of its CPU, so short-lived parts are slightly under-counted.
"""
from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

SAMPLE_S = 0.2
TICK = os.sysconf("SC_CLK_TCK")

# Part name -> does a command line belong to it. The first that matches wins: training last.
Classifier = Callable[[str], str | None]


def platform_part(cmdline: str) -> str | None:
    """tfyarn's processes: the AM (script and skein's JVM), executors, the client, skein's driver."""
    if "appmaster.am" in cmdline:
        return "am_script"
    if "com.anaconda.skein.ApplicationMaster" in cmdline:
        return "am_jvm"
    if "appmaster.executor" in cmdline:
        return "executors"
    if "com.anaconda.skein.Driver" in cmdline:
        return "skein_driver"
    if "-m tfyarn" in cmdline or "tfyarn/__main__" in cmdline:
        return "client"
    return None


def _read(pid: str) -> tuple[str, float] | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return cmd, (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def _peak_rss_kib(pid: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


class CpuSampler:
    """``with CpuSampler(classify) as s: ...`` then ``s.by_part()``: CPU seconds per part during the block."""

    def __init__(self, classify: Classifier):
        self.classify = classify
        self._first: dict[str, float] = {}
        self._last: dict[str, float] = {}
        self._part: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.history: list[tuple[float, dict[str, float]]] = []  # (time, {pid: cpu}) of each reading
        self._hwm: dict[str, int] = {}  # pid -> peak resident set (KiB), as the kernel keeps it
        self._wall_offset = time.time() - time.monotonic()  # to place a wall-clock window on the readings

    def __enter__(self) -> CpuSampler:
        self._sample(initial=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            self._sample()

    def _sample(self, initial: bool = False) -> None:
        me = str(os.getpid())
        now = time.monotonic()
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or pid == me:
                continue
            got = _read(pid)
            if got is None:
                continue
            cmd, cpu = got
            if pid not in self._part:
                part = self.classify(cmd)
                if part is None:
                    continue
                self._part[pid] = part
                self._first[pid] = cpu if initial else 0.0
            self._last[pid] = cpu
            self._hwm[pid] = max(self._hwm.get(pid, 0), _peak_rss_kib(pid))
        self.history.append((now, dict(self._last)))

    def peak_rss_mib(self) -> dict[str, float]:
        """Per part, the sum over its processes of each one's peak resident set (MiB)."""
        out: dict[str, float] = {}
        for pid, part in self._part.items():
            out[part] = out.get(part, 0.0) + self._hwm.get(pid, 0) / 1024
        return out

    def by_part(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for pid, part in self._part.items():
            out[part] = out.get(part, 0.0) + max(0.0, self._last[pid] - self._first[pid])
        return out

    def in_window(self, start: float, end: float) -> tuple[dict[str, float], float]:
        """({part: CPU seconds}, seconds covered) between two wall-clock times (``time.time()``), e.g. a
        training loop's own start and end as its process reported them."""
        inside = [(t, cpus) for t, cpus in self.history if start <= t + self._wall_offset <= end]
        if len(inside) < 2:
            raise ValueError(f"too few readings in the window ({len(inside)})")
        (t0, a), (t1, b) = inside[0], inside[-1]
        out: dict[str, float] = {}
        for pid, cpu in b.items():
            out[self._part[pid]] = out.get(self._part[pid], 0.0) + cpu - a.get(pid, 0.0)
        return out, t1 - t0

    def steady_share(self, part: str, trim: float = 0.2) -> tuple[dict[str, float], float, float]:
        """({other part: CPU}, CPU of ``part``, seconds) in the middle of ``part``'s life.

        The window is the span in which a process of ``part`` was seen, less ``trim`` of it at
        each end: start-up and shut-down are left out, so the figure is per second of steady work.
        """
        alive = [t for t, cpus in self.history if any(self._part.get(p) == part for p in cpus)]
        if len(alive) < 5:
            raise ValueError(f"too few readings while {part} ran ({len(alive)})")
        span = alive[-1] - alive[0]
        lo, hi = alive[0] + trim * span, alive[-1] - trim * span
        inside = [(t, cpus) for t, cpus in self.history if lo <= t <= hi]
        (t0, a), (t1, b) = inside[0], inside[-1]
        mine, others = 0.0, {}
        for pid, cpu in b.items():
            delta = cpu - a.get(pid, 0.0)  # a process that started in the window: all of it
            if self._part[pid] == part:
                mine += delta
            else:
                others[self._part[pid]] = others.get(self._part[pid], 0.0) + delta
        return others, mine, t1 - t0
