"""Finding a job's processes on this node by what YARN put in their environment, not by name."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def _environ(pid: str) -> bytes:
    try:
        return (Path("/proc") / pid / "environ").read_bytes()
    except OSError:
        return b""


def _cmdline(pid: str) -> str:
    try:
        return (Path("/proc") / pid / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def job_processes(app_id: str) -> list[str]:
    """Processes whose environment names this application (AM, executors, user processes, TF servers)."""
    marker = app_id.removeprefix("application_").encode()
    return [f"{p.name}: {_cmdline(p.name)[:120]!r}" for p in Path("/proc").glob("[0-9]*")
            if marker in _environ(p.name)]


def wait_none_left(app_id: str, timeout_s: float = 30) -> list[str]:
    deadline = time.monotonic() + timeout_s
    while (left := job_processes(app_id)) and time.monotonic() < deadline:
        time.sleep(1)
    return left


def container_pids(yarn_container_id: str, needle: str, program: str = "") -> list[int]:
    """Processes of one YARN container (CONTAINER_ID in their environment) whose command line has
    ``needle`` (and, if given, whose executable is named ``program``: not the shell that started it)."""
    marker = f"CONTAINER_ID={yarn_container_id}\0".encode()
    return [int(p.name) for p in Path("/proc").glob("[0-9]*")
            if marker in _environ(p.name) and needle in _cmdline(p.name)
            and (not program or _exe(p.name) == program)]


def _exe(pid: str) -> str:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return ""


def kill_9(yarn_container_id: str, needle: str, wait_s: float = 30) -> int:
    """SIGKILL the container's process running ``needle`` (the user process, not its executor)."""
    deadline = time.monotonic() + wait_s
    while len(pids := container_pids(yarn_container_id, needle)) != 1 and time.monotonic() < deadline:
        time.sleep(0.5)
    everything = [f"{p}: {_cmdline(str(p))[:80]}" for p in container_pids(yarn_container_id, "")]
    any_container = [p.name for p in Path("/proc").glob("[0-9]*") if b"CONTAINER_ID=" in _environ(p.name)]
    assert len(pids) == 1, (f"expected one {needle!r} process in {yarn_container_id}, found {pids} of "
                            f"{everything}; processes of any container: {any_container[:20]}")
    os.kill(pids[0], signal.SIGKILL)
    return pids[0]
