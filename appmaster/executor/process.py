"""Run the user's command so that nothing it starts outlives its task.

The child stays in the container's process group, so a NodeManager kill
(SIGTERM, then SIGKILL, to that group) reaches it and its children directly.
The executor also makes itself a child subreaper: processes the command
leaves behind (daemons, ``&`` jobs) stay its descendants, and are stopped
when the command exits. SIGTERM/SIGINT to the executor are remembered and
passed on, with SIGKILL after a grace period: a task that was told to stop
never counts as succeeded, whatever its command returned. The child's
stderr is passed through as it comes (``\\r`` progress bars included), and a
bounded tail of it is kept for the job's diagnostics.

Only the main thread ever reaps the direct child (``Popen.wait``): a reaper
thread that collected it first would make Python report exit code 0.
"""

from __future__ import annotations

import collections
import ctypes
import errno
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import BinaryIO

from tfyarn import protocol

log = logging.getLogger("tfyarn.executor.process")

GRACE_S = 10.0
_PR_SET_CHILD_SUBREAPER = 36
_READ_CHUNK = 65536
EXIT_CANNOT_EXECUTE = 126  # as a shell reports a command it found but could not run


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    stderr_tail: str
    stop_signal: int = 0  # the signal that told the executor to stop while the command ran, if any


class Terminated(BaseException):
    """The executor was told to stop (SIGTERM/SIGINT) outside the command's run: abandon what it does.

    A BaseException, so ``except Exception`` around uploads cannot swallow it.
    """

    def __init__(self, signum: int):
        super().__init__(f"stopped by signal {signum}")
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class StopSignals:
    """SIGTERM/SIGINT to the executor: remembered, passed on to the command's processes, and,
    outside the command's run, raised in the main thread as ``Terminated``.

    Install once, at the executor's start, so no moment of the task's life
    (staging, training, publishing) can miss a stop request.
    """

    def __init__(self) -> None:
        self.signum = 0
        self.child_pid = 0  # the direct child while the command runs: only the main thread reaps it
        self.running = False  # while the command runs, stop requests are forwarded, not raised
        self.keep: set[int] = set()  # other direct children whose owners reap them (`tfyarn exec` sessions)
        # Run before the command's processes are stopped, whoever stops them (a signal, the watchdog, the
        # command's end): the exec agent ends its sessions itself, so their clients learn why.
        self.before_stop: list[Callable[[], None]] = []

    def install(self) -> StopSignals:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        self.signum = self.signum or signum
        threading.Thread(target=self.stop_all, kwargs={"first": signum}, daemon=True).start()
        if not self.running:
            raise Terminated(signum)

    def stop_all(self, grace_s: float = GRACE_S, first: int = signal.SIGTERM) -> None:
        """The ``before_stop`` hooks, then every descendant (the direct children others reap are not reaped)."""
        for hook in list(self.before_stop):
            try:
                hook()
            except Exception as e:  # stopping must go on
                sys.stderr.write(f"tfyarn: a stop hook failed: {type(e).__name__}: {e}\n")
        stop_descendants(grace_s, first, keep={self.child_pid, *self.keep})


def become_subreaper() -> bool:
    """Orphaned descendants re-parent to this process instead of init (Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _proc_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state letter) of every process, from /proc.

    A process may end between the listing and the read of its entry; the
    kernel then answers ENOENT or, while it is being torn down, ESRCH
    (which pathlib's glob does not expect and raised, killing the executor
    in the middle of stopping a task). Either way that process is skipped.
    """
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                text = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces, so split after the last ')'.
        fields = text[text.rfind(")") + 2 :].split() if ")" in text else []
        if len(fields) > 1 and fields[1].isdigit():
            table[int(name)] = (int(fields[1]), fields[0])
    return table


def descendants(root: int) -> list[int]:
    """Every live (not zombie) process below ``root``."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    for pid, (ppid, state) in _proc_table().items():
        if state != "Z":
            children[ppid].append(pid)
    found, todo = [], [root]
    while todo:
        for kid in children.get(todo.pop(), []):
            found.append(kid)
            todo.append(kid)
    return found


def stop_descendants(grace_s: float = GRACE_S, first: int = signal.SIGTERM, keep: int | Collection[int] = 0) -> None:
    """SIGTERM everything below this process, SIGKILL what is left after ``grace_s``.

    Zombies are reaped by pid, never with ``waitpid(-1)``, and ``keep`` (direct
    children others wait for: the command, exec sessions) is never reaped here.
    """
    me = os.getpid()
    deadline = time.monotonic() + grace_s
    sig = first
    while procs := descendants(me):
        for pid in procs:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):  # gone, or its pid already another user's
                pass
        reap_orphans(keep)
        if time.monotonic() > deadline:
            sig = signal.SIGKILL
        time.sleep(0.1)
    reap_orphans(keep)


def reap_orphans(keep: int | Collection[int] = 0) -> None:
    """Collect the exit status of this process's zombie children, except ``keep``."""
    me = os.getpid()
    kept = {keep} if isinstance(keep, int) else set(keep)
    for pid, (ppid, state) in _proc_table().items():
        if ppid == me and state == "Z" and pid not in kept:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


class _Tail:
    """The last lines of a stream, bounded in lines and in bytes per line.

    ``\\r`` ends a line too, so a progress bar keeps only its latest state.
    """

    MAX_LINE = 2048

    def __init__(self, lines: int):
        self.lines: collections.deque[str] = collections.deque(maxlen=lines)
        self.partial = ""

    def feed(self, data: bytes) -> None:
        text = self.partial + data.decode(errors="replace").replace("\r\n", "\n")
        *done, self.partial = text.replace("\r", "\n").split("\n")
        self.lines.extend(line[: self.MAX_LINE] for line in done if line)
        self.partial = self.partial[-self.MAX_LINE :]

    def text(self) -> str:
        return "\n".join([*self.lines, *([self.partial] if self.partial else [])][-(self.lines.maxlen or 1) :])


def _pump(fd: int, sink: BinaryIO, tail: _Tail | None, on_output: Callable[[], None] | None) -> None:
    """Copy one of the child's streams to ours as it comes, chunk by chunk, keeping a tail of stderr."""
    while chunk := os.read(fd, _READ_CHUNK):
        sink.write(chunk)
        sink.flush()
        if tail:
            tail.feed(chunk)
        if on_output:
            on_output()
    os.close(fd)


def _cannot_run(command: Sequence[str], e: OSError) -> Outcome:
    why = e.strerror or str(e)
    if e.errno == errno.ENOEXEC:
        why += " (a script needs a first line such as #!/bin/bash or #!/usr/bin/env python)"
    msg = f"tfyarn: cannot run {command[0]!r}: {why}"
    log.error(msg.removeprefix("tfyarn: "))  # the record's stderr tail keeps the prefix: it is not the command's
    missing = isinstance(e, FileNotFoundError)
    return Outcome(protocol.EXIT_COMMAND_NOT_FOUND if missing else EXIT_CANNOT_EXECUTE, msg)


def run(
    command: Sequence[str],
    env: dict[str, str],
    stop: StopSignals | None = None,
    on_output: Callable[[], None] | None = None,
) -> Outcome:
    """Run ``command`` to its end; its exit code, or 128+N if the executor got signal N meanwhile.

    ``on_output`` (the hang watchdog's) is called whenever the command writes: its stdout is then
    passed through a pipe as its stderr always is; without it, stdout is the executor's own.
    """
    stop = stop or StopSignals().install()
    if stop.signum:  # told to stop before the command could start
        return Outcome(128 + stop.signum, f"stopped by signal {stop.signum} before the command started", stop.signum)
    become_subreaper()
    tail = _Tail(protocol.STDERR_TAIL_LINES)
    pipes: list[tuple[tuple[int, int], BinaryIO, _Tail | None]] = [(os.pipe(), sys.stderr.buffer, tail)]
    if on_output:
        pipes.append((os.pipe(), sys.stdout.buffer, None))
    stop.running = True
    try:
        try:
            child = subprocess.Popen(
                list(command), env=env, stderr=pipes[0][0][1], stdout=pipes[1][0][1] if on_output else None
            )
        except OSError as e:
            for (read_fd, _), _, _ in pipes:
                os.close(read_fd)
            return _cannot_run(command, e)
        finally:
            for (_, write_fd), _, _ in pipes:
                os.close(write_fd)
        stop.child_pid = child.pid
        pumpers = [
            threading.Thread(target=_pump, args=(read_fd, sink, kept, on_output), daemon=True)
            for (read_fd, _), sink, kept in pipes
        ]
        for pumper in pumpers:
            pumper.start()
        code = child.wait()
        stop.child_pid = 0
        stop.stop_all(grace_s=2.0)  # leftovers of a finished command get a short grace
        for pumper in pumpers:
            pumper.join(timeout=5)
    finally:
        stop.running, stop.child_pid = False, 0
    # A child killed by signal N reports -N; shells report 128+N.
    code = code if code >= 0 else 128 - code
    if stop.signum and code == 0:  # it exited cleanly, but only because it was told to stop
        code = 128 + stop.signum
    return Outcome(code, tail.text(), stop.signum)
