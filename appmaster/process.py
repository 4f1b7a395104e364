"""Run the user's command as a child in its own process group.

The child's stderr is passed through and its last lines are kept for the
job's diagnostics. SIGTERM/SIGINT to the executor reach the whole group,
with SIGKILL after a grace period, so no process of the task outlives it.
"""
from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from tfyarn import protocol

GRACE_S = 10.0


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    stderr_tail: str


def run(command: Sequence[str], env: dict[str, str]) -> Outcome:
    try:
        child = subprocess.Popen(list(command), env=env, stderr=subprocess.PIPE, start_new_session=True)
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
        _stop_group(child, signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    code = child.wait()
    pumper.join(timeout=5)
    _kill_leftovers(child.pid)
    # A child killed by signal N reports -N; shells report 128+N.
    return Outcome(code if code >= 0 else 128 - code, "\n".join(tail))


def _stop_group(child: subprocess.Popen[bytes], signum: int) -> None:
    try:
        os.killpg(child.pid, signum)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + GRACE_S

    def escalate() -> None:
        while time.monotonic() < deadline:
            if child.poll() is not None:
                break
            time.sleep(0.1)
        _kill_leftovers(child.pid)

    threading.Thread(target=escalate, daemon=True).start()


def _kill_leftovers(pgid: int) -> None:
    """Background processes the user command left in its group die with the task."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
