"""Run the user's command so that nothing it starts outlives its task.

The child stays in the container's process group, so a NodeManager kill
(SIGTERM, then SIGKILL, to that group) reaches it and its children directly.
The executor also makes itself a child subreaper: processes the command
leaves behind (daemons, ``&`` jobs) stay its descendants, and are stopped
when the command exits. SIGTERM/SIGINT to the executor are passed on, with
SIGKILL after a grace period. The child's stderr is passed through and its
last lines are kept for the job's diagnostics.
"""
from __future__ import annotations

import collections
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tfyarn import protocol

GRACE_S = 10.0
_PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    stderr_tail: str


def become_subreaper() -> bool:
    """Orphaned descendants re-parent to this process instead of init (Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """Every live process below ``root``, from /proc."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces, so split after the last ')'.
        fields = text[text.rindex(")") + 2:].split()
        if fields[0] != "Z":
            children[int(fields[1])].append(int(stat.parent.name))
    found, todo = [], [root]
    while todo:
        for kid in children.get(todo.pop(), []):
            found.append(kid)
            todo.append(kid)
    return found


def stop_descendants(grace_s: float = GRACE_S, first: int = signal.SIGTERM) -> None:
    """SIGTERM everything below this process, SIGKILL what is left after ``grace_s``."""
    me = os.getpid()
    deadline = time.monotonic() + grace_s
    sig = first
    while procs := descendants(me):
        for pid in procs:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        _reap()
        if time.monotonic() > deadline:
            sig = signal.SIGKILL
        time.sleep(0.1)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def run(command: Sequence[str], env: dict[str, str]) -> Outcome:
    become_subreaper()
    try:
        child = subprocess.Popen(list(command), env=env, stderr=subprocess.PIPE)
    except (FileNotFoundError, PermissionError) as e:
        msg = f"tfyarn: cannot run {command[0]!r}: {e.strerror}"
        print(msg, file=sys.stderr)
        return Outcome(protocol.EXIT_COMMAND_NOT_FOUND, msg)
    tail: collections.deque[str] = collections.deque(maxlen=protocol.STDERR_TAIL_LINES)

    def pump() -> None:
        stream = child.stderr
        if stream is None:  # not reachable with stderr=PIPE; keeps the type checker honest
            return
        for raw in iter(stream.readline, b""):
            sys.stderr.buffer.write(raw)
            sys.stderr.flush()
            tail.append(raw.decode(errors="replace").rstrip("\n"))

    pumper = threading.Thread(target=pump, daemon=True)
    pumper.start()

    def forward(signum: int, _frame: object) -> None:
        threading.Thread(target=stop_descendants, kwargs={"first": signum}, daemon=True).start()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    code = child.wait()
    stop_descendants(grace_s=2.0)  # leftovers of a finished command get a short grace
    pumper.join(timeout=5)
    # A child killed by signal N reports -N; shells report 128+N.
    return Outcome(code if code >= 0 else 128 - code, "\n".join(tail))
