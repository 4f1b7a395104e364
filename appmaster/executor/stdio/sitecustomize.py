"""Line-buffered stdout and stderr for every Python process of a task, then the sitecustomize this shadows.

The executor puts this directory first on the task's PYTHONPATH. With the
PYTHONUNBUFFERED=1 that keeps task logs live, Python writes ``print``'s text and
its newline in two write() calls; the processes of a container (torchrun's
ranks) share one log file, so another rank's line could land between them and
glue two lines into one. Line buffering keeps the output live and makes each
line a single write.
"""

from __future__ import annotations

import importlib
import os
import sys


def _line_buffered() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(line_buffering=True, write_through=False)  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            pass  # replaced, closed or not a TextIOWrapper: leave it as it is


def _hand_over() -> None:
    """Import the sitecustomize further down sys.path (a distribution's or a venv's), as Python would have."""
    here = os.path.dirname(os.path.abspath(__file__))
    ours = sys.modules.pop(__name__)
    saved = sys.path[:]
    sys.path[:] = [p for p in saved if os.path.abspath(p or os.curdir) != here]
    try:
        importlib.import_module("sitecustomize")
    except ImportError as e:
        if e.name != "sitecustomize":
            raise
        sys.modules[__name__] = ours  # none further down: this one stays
    finally:
        sys.path[:] = saved


_line_buffered()
_hand_over()
