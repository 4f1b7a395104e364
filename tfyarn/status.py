"""Job and task states as data, shared by the client and the ApplicationMaster.

YARN's own application states map onto ``JobState`` through one table.
Terminal states cannot be left. YARN's diagnostics are shown trimmed of Java
stack frames (``trim_diagnostics``); the raw text stays in ``diagnostics_full``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Any

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
    "NEW": JobState.SUBMITTED,
    "NEW_SAVING": JobState.SUBMITTED,
    "SUBMITTED": JobState.SUBMITTED,
    "ACCEPTED": JobState.ACCEPTED,
    "RUNNING": JobState.RUNNING,
}


def job_state(yarn_state: str, final_status: str) -> JobState:
    """The job's state from YARN's application state and final status."""
    if yarn_state in _YARN_ACTIVE:
        return _YARN_ACTIVE[yarn_state]
    return _YARN_TO_JOB.get((yarn_state, final_status), JobState.FAILED)


# A Java stack frame, or the "... 12 more" that ends a cause's frames.
_FRAME = re.compile(r"^\s*(at [\w$.<>/]+\(.*\)|\.\.\. \d+ more)\s*$")
# Lines a JVM (skein's AM, YARN's launcher) prints that say nothing about the job.
_NOISE = re.compile(
    r"^\s*(SLF4J:|log4j:WARN|WARNING: |Picked up _?JAVA_TOOL_OPTIONS|"
    r"For more detailed output, check the application tracking page)"
)


_RECOVERED = "Attempt recovered after RM restart"


def trim_diagnostics(text: str) -> str:
    """YARN's diagnostics for people: the messages without Java stack frames and JVM noise.

    A Java trace can run to hundreds of lines; the message that says what went
    wrong is its first line (and each "Caused by:"), which are kept, in order.
    """
    kept: list[str] = []
    # After a ResourceManager failover YARN appends the AM's message to its own without a break.
    text = re.sub(f"({re.escape(_RECOVERED)})(?=\\S)", r"\1\n", text)
    for line in text.strip().splitlines():
        if not (_FRAME.match(line) or _NOISE.match(line) or not line.strip()):
            kept.append(line.rstrip())
    return "\n".join(kept)


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
    diagnostics_full: str = ""  # YARN's text as it is; ``diagnostics`` is it trimmed for people

    @property
    def framework(self) -> str:
        for tag in self.tags:
            if tag.startswith("framework:"):
                return tag.split(":", 1)[1]
        return "?"


def yarn_report(r: Any) -> JobReport:
    """A JobReport from skein's ApplicationReport ``r`` (YARN's word on a job)."""
    state, final = str(r.state), str(r.final_status)
    return JobReport(
        app_id=r.id,
        name=r.name,
        state=job_state(state, final),
        yarn_state=state,
        final_status=final,
        diagnostics=trim_diagnostics(r.diagnostics or ""),
        diagnostics_full=(r.diagnostics or "").strip(),
        tracking_url=r.tracking_url or "",
        queue=r.queue,
        user=r.user,
        start_time_ms=_ms(r.start_time),
        finish_time_ms=_ms(r.finish_time),
        tags=tuple(sorted(r.tags or ())),
    )


def _ms(t: object) -> int:
    return int(t.timestamp() * 1000) if t is not None else 0  # type: ignore[attr-defined]
