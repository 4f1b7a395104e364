"""One-line progress reports from a training script to tfyarn.

    import tfyarn.report
    tfyarn.report.first_step()              # after the first training step: the startup timeline
    tfyarn.report.progress(step)            # each step: the hang watchdog's heartbeat
    tfyarn.report.metric("loss", 0.31, step)

``progress`` and ``metric`` are heartbeats for ``--progress-timeout``: once a
script has sent one, only heartbeats (not its output) count as progress. They
write at most one line a second, so calling them every step costs nothing.

Outside a tfyarn container (no $TFYARN_EVENTS) every call does nothing, so
a script stays runnable on a laptop. Only the standard library is used.
"""

from __future__ import annotations

import json
import math
import os
import time
from typing import Any

from tfyarn import protocol

HEARTBEAT_EVERY_S = 1.0  # the most often progress() and metric() write a line

_reported: set[str] = set()
_last_heartbeat = 0.0
_pending: dict[str, Any] = {}  # the newest heartbeat not yet written (a call within HEARTBEAT_EVERY_S)


def _write(record: dict[str, Any]) -> bool:
    path = os.environ.get(protocol.ENV_EVENTS)
    if not path:
        return False
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")
    return True


def milestone(stage: str) -> None:
    """Record ``stage`` (once) with the current time; the executor forwards it to the AM."""
    if stage in _reported or not os.environ.get(protocol.ENV_EVENTS):
        return
    _reported.add(stage)
    _write({"stage": stage, "time": time.time()})


def first_step() -> None:
    """Mark the end of the first training step: the last stage of the startup timeline."""
    milestone("first_step")


def progress(step: int | None = None, **metrics: float) -> None:
    """A heartbeat: training moves (at ``step``, with these metric values)."""
    global _last_heartbeat
    if step is not None:
        _pending["step"] = int(step)
    for name, value in metrics.items():
        if isinstance(value, (int, float)) and math.isfinite(value):
            _pending.setdefault("metrics", {})[str(name)] = float(value)
    now = time.monotonic()
    if now - _last_heartbeat < HEARTBEAT_EVERY_S:
        return
    if _write({"progress": True, "time": time.time(), **_pending}):
        _last_heartbeat = now
        _pending.clear()


def metric(name: str, value: float, step: int | None = None) -> None:
    """A heartbeat carrying one metric's newest value."""
    progress(step, **{name: value})
