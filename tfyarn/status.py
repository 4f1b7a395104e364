"""Job and task states as data, shared by the client and the ApplicationMaster.

YARN's own application states map onto ``JobState`` through one table.
Terminal states cannot be left.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

_APP_ID = re.compile(r"^application_\d+_\d+$")


def is_app_id(text: str) -> bool:
    """``application_<cluster timestamp>_<sequence>``, as YARN names applications."""
    return bool(_APP_ID.match(text))


class JobState(str, Enum):
    SUBMITTED = "SUBMITTED"
    ACCEPTED = "ACCEPTED"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    KILLED = "KILLED"

    def is_terminal(self) -> bool:
        return self in (JobState.SUCCEEDED, JobState.FAILED, JobState.KILLED)


class TaskState(str, Enum):
    WAITING = "WAITING"  # not yet requested from YARN
    REQUESTED = "REQUESTED"  # asked of the RM, no container yet
    RUNNING = "RUNNING"
    RESTARTING = "RESTARTING"  # failed; a new container is due after the restart backoff
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    KILLED = "KILLED"

    def is_terminal(self) -> bool:
        return self in (TaskState.SUCCEEDED, TaskState.FAILED, TaskState.KILLED)


# (YARN application state, YARN final status) -> JobState. YARN reports
# FINISHED for both success and failure of an app that unregistered itself.
_YARN_TO_JOB: dict[tuple[str, str], JobState] = {
    ("FINISHED", "SUCCEEDED"): JobState.SUCCEEDED,
    ("FINISHED", "FAILED"): JobState.FAILED,
    ("FINISHED", "KILLED"): JobState.KILLED,
    ("FINISHED", "UNDEFINED"): JobState.FAILED,
    ("FAILED", "FAILED"): JobState.FAILED,
    ("FAILED", "UNDEFINED"): JobState.FAILED,
    ("KILLED", "KILLED"): JobState.KILLED,
    ("KILLED", "UNDEFINED"): JobState.KILLED,
}
_YARN_ACTIVE: dict[str, JobState] = {
    "NEW": JobState.SUBMITTED, "NEW_SAVING": JobState.SUBMITTED, "SUBMITTED": JobState.SUBMITTED,
    "ACCEPTED": JobState.ACCEPTED, "RUNNING": JobState.RUNNING,
}


def job_state(yarn_state: str, final_status: str) -> JobState:
    """The job's state from YARN's application state and final status."""
    if yarn_state in _YARN_ACTIVE:
        return _YARN_ACTIVE[yarn_state]
    return _YARN_TO_JOB.get((yarn_state, final_status), JobState.FAILED)


@dataclass(frozen=True)
class JobReport:
    """What the client knows of a job at one moment."""

    app_id: str
    name: str
    state: JobState
    yarn_state: str
    final_status: str
    diagnostics: str
    tracking_url: str
    queue: str
    user: str
    start_time_ms: int
    finish_time_ms: int
    tags: tuple[str, ...] = ()

    @property
    def framework(self) -> str:
        for tag in self.tags:
            if tag.startswith("framework:"):
                return tag.split(":", 1)[1]
        return "?"
