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


def container_pids(yarn_container_id: str, needle: str) -> list[int]:
    """Processes of one YARN container (CONTAINER_ID in their environment) whose command line has ``needle``."""
    marker = f"CONTAINER_ID={yarn_container_id}\0".encode()
    return [int(p.name) for p in Path("/proc").glob("[0-9]*")
            if marker in _environ(p.name) and needle in _cmdline(p.name)]


def kill_9(yarn_container_id: str, needle: str) -> int:
    """SIGKILL the container's process running ``needle`` (the user process, not its executor)."""
    pids = container_pids(yarn_container_id, needle)
    assert len(pids) == 1, f"expected one {needle!r} process in {yarn_container_id}, found {pids}"
    os.kill(pids[0], signal.SIGKILL)
    return pids[0]
