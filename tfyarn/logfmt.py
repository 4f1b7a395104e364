"""The one log format of tfyarn's ApplicationMaster and executors.

``2026-12-03 16:40:01,123 INFO tfyarn.am: worker:1 failed (exit code 1); restarting it in 2 s``

Time (local, milliseconds), level, logger, message: the layout of Hadoop's
log4j default (``%d{ISO8601} %p %c: %m``), so the Python AM's lines sort in
with skein's Java AM log and the NodeManager's. Everything goes to stderr,
which YARN keeps as the container's ``stderr`` file (``tfyarn logs``).
"""

from __future__ import annotations

import logging
import sys

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
AM_LOGGER = "tfyarn.am"
EXECUTOR_LOGGER = "tfyarn.executor"


class _Stderr(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a line is logged, not the one it was made with: a
    test harness that swaps and closes stderr (pytest's capture) then never gets a closed stream."""

    @property
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, _value: object) -> None:
        pass


def setup(name: str, level: int = logging.INFO) -> logging.Logger:
    """Route the ``tfyarn`` loggers to stderr in FORMAT; idempotent, so tests may call it twice."""
    root = logging.getLogger("tfyarn")
    if not any(getattr(h, "_tfyarn", False) for h in root.handlers):
        handler = _Stderr()
        handler.setFormatter(logging.Formatter(FORMAT))
        handler._tfyarn = True  # type: ignore[attr-defined]
        root.addHandler(handler)
        root.propagate = False
    root.setLevel(level)
    return logging.getLogger(name)
