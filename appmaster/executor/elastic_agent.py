"""torchrun's elastic agent, each rendezvous round it completes written to the task's events file.

An elastic pytorch task runs ``python -m appmaster.executor.elastic_agent <torchrun args>``
(tfyarn.frameworks.pytorch). The agent logs "Rendezvous complete" at INFO
with the round's numbers as the record's arguments; a handler on that one
logger (not $LOGLEVEL, which every training process would inherit) appends
them to $TFYARN_EVENTS as a membership line. The executor's Monitor
publishes the newest to the AM: the job's world size and its changes.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from typing import Any

from tfyarn import protocol

AGENT_LOGGER = "torch.distributed.elastic.agent.server.api"


def membership_line(args: Any, now: float) -> str | None:
    """The events-file line for a "Rendezvous complete" record's arguments; None for any other record."""
    if not isinstance(args, dict) or "group_world_size" not in args:
        return None
    try:
        record = {
            "membership": True,
            "world_size": int(args["group_world_size"]),
            "group_rank": int(args.get("group_rank", -1)),
            "restart_count": int(args.get("restart_count", 0)),
            "time": now,
        }
    except (TypeError, ValueError):
        return None
    return json.dumps(record)


class MembershipHandler(logging.Handler):
    """Appends one membership line per completed rendezvous round to ``path``."""

    def __init__(self, path: str) -> None:
        super().__init__(logging.INFO)
        self.path = path

    def emit(self, record: logging.LogRecord) -> None:
        line = membership_line(record.args, time.time())
        if line is None:
            return
        try:
            with open(self.path, "a") as f:
                f.write(line + "\n")
        except OSError:  # the world size on the page is a nicety; training goes on without it
            pass


def main(argv: list[str]) -> None:
    from torch.distributed import run  # imported here: this module's helpers stay importable without torch

    logger = logging.getLogger(AGENT_LOGGER)
    logger.setLevel(logging.INFO)
    if path := os.environ.get(protocol.ENV_EVENTS):
        logger.addHandler(MembershipHandler(path))
    run.main(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
