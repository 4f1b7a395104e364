"""One-line progress reports from a training script to tfyarn's status page.

    import tfyarn.report
    tfyarn.report.first_step()      # after the first training step

Outside a tfyarn container (no $TFYARN_EVENTS) every call does nothing, so
a script stays runnable on a laptop. Only the standard library is used.
"""

from __future__ import annotations

import json
import os
import time

from tfyarn import protocol

_reported: set[str] = set()


def milestone(stage: str) -> None:
    """Record ``stage`` (once) with the current time; the executor forwards it to the AM."""
    path = os.environ.get(protocol.ENV_EVENTS)
    if not path or stage in _reported:
        return
    _reported.add(stage)
    with open(path, "a") as f:
        f.write(json.dumps({"stage": stage, "time": time.time()}) + "\n")


def first_step() -> None:
    """Mark the end of the first training step: the last stage of the startup timeline."""
    milestone("first_step")
