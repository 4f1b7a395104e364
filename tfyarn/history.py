"""Job history beyond the ResourceManager's memory: the status documents jobs saved on HDFS.

The RM forgets finished jobs (past yarn.resourcemanager.max-completed-applications,
or at a restart without a state store). Every tfyarn AM saves its final status
document as hdfs:///user/<user>/.tfyarn/jobs/<app>/status.json, so `tfyarn
history` lists the RM's jobs and those documents together, and `status`,
`logs` and `fetch` of a job the RM has forgotten read the saved document.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from tfyarn import protocol
from tfyarn.status import JobReport, JobState
from tfyarn.wire import StatusDoc, WireError

log = logging.getLogger("tfyarn.history")

_APP_DIR = re.compile(r"application_\d+_\d+")
SOURCES = ("yarn", "hdfs", "both")  # who knows the job: the RM, a saved document, or both
SOURCE_NAMES = {"yarn": "RM", "hdfs": "HDFS", "both": "RM, HDFS"}  # as the table and the page show them


@dataclass(frozen=True)
class HistoryEntry:
    """One job of `tfyarn history` (docs: README's command table; --json prints these fields)."""

    app_id: str
    name: str
    user: str
    framework: str
    queue: str
    state: str
    start_time: float  # epoch seconds; 0 when unknown
    duration_s: float | None
    tasks: int | None  # None: no document says (a job the RM knows that saved none yet)
    gpus: int | None
    source: str  # one of SOURCES

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _framework(tags: Iterable[str]) -> str:
    return next((t.split(":", 1)[1] for t in tags if t.startswith("framework:")), "")


def report_of(doc: StatusDoc) -> JobReport:
    """What the RM would have said of a job it has forgotten, from the job's saved document."""
    try:
        state = JobState(doc.state)
    except ValueError:
        state = JobState.FAILED
    if not state.is_terminal():  # saved mid-run by an AM that then died: the RM no longer runs it
        state = JobState.FAILED
    start = doc.timeline.get("submitted") or doc.timeline.get("am_started") or 0.0
    return JobReport(
        app_id=doc.app_id,
        name=doc.name,
        state=state,
        yarn_state="",  # the RM no longer knows it
        final_status=doc.state,
        diagnostics=doc.diagnostics,
        tracking_url="",
        queue=doc.queue,
        user=doc.user,
        start_time_ms=int(start * 1000),
        finish_time_ms=int(doc.time * 1000),
        tags=(f"framework:{doc.framework}",) if doc.framework else (),
        diagnostics_full=doc.diagnostics,
    )


def entries(reports: Iterable[JobReport], docs: dict[str, StatusDoc]) -> list[HistoryEntry]:
    """The RM's reports and the saved documents, one entry per job, newest first.

    A job both know takes its state from the RM (it may still run) and its
    tasks and GPUs from the document.
    """
    out: dict[str, HistoryEntry] = {}
    for rep in reports:
        doc = docs.get(rep.app_id)
        end = rep.finish_time_ms or 0
        out[rep.app_id] = HistoryEntry(
            app_id=rep.app_id,
            name=rep.name,
            user=rep.user,
            framework=_framework(rep.tags) or (doc.framework if doc else ""),
            queue=rep.queue,
            state=rep.state.value,
            start_time=rep.start_time_ms / 1000,
            duration_s=(end - rep.start_time_ms) / 1000 if end and rep.start_time_ms else None,
            tasks=len(doc.tasks) if doc else None,
            gpus=_gpus(doc) if doc else None,
            source="both" if doc else "yarn",
        )
    for app_id, doc in docs.items():
        if app_id not in out:
            rep = report_of(doc)
            out[app_id] = HistoryEntry(
                app_id=app_id,
                name=doc.name,
                user=doc.user,
                framework=doc.framework,
                queue=doc.queue,
                state=rep.state.value,
                start_time=rep.start_time_ms / 1000,
                duration_s=doc.duration_s,
                tasks=len(doc.tasks),
                gpus=_gpus(doc),
                source="hdfs",
            )
    return sorted(out.values(), key=lambda e: (e.start_time, e.app_id), reverse=True)


def _gpus(doc: StatusDoc) -> int:
    return sum(t.gpus_asked for t in doc.tasks)


def select(items: list[HistoryEntry], since_s: float, now: float, state: str = "") -> list[HistoryEntry]:
    """Those started within ``since_s`` of ``now`` (0: all) and, if given, in ``state``."""
    return [
        e for e in items if (not since_s or e.start_time >= now - since_s) and (not state or e.state == state.upper())
    ]


# --- HDFS -----------------------------------------------------------------------------------------
def read_saved(user: str, app_id: str) -> StatusDoc | None:
    """``app_id``'s saved document in ``user``'s job dir; None if there is none (or it is unreadable)."""
    from tfyarn.storage import locate, parse_uri

    where = f"{protocol.job_dir(user, app_id)}/{protocol.STATUS_FILE}"
    try:
        loc = locate(parse_uri(where))
        with loc.fs.open_input_stream(loc.path, compression=None) as f:
            raw = f.read()
    except Exception:  # no such file, no access, HDFS unreachable: the caller says what it knows
        return None
    try:
        return StatusDoc.from_json(raw) if raw else None
    except WireError as e:
        log.warning(f"{where} is unreadable, left out: {e}")
        return None


def saved_docs(user: str) -> dict[str, StatusDoc]:
    """Every job document ``user`` has on HDFS (app id -> document)."""
    import pyarrow.fs as pafs

    from tfyarn.storage import locate, parse_uri

    loc = locate(parse_uri(protocol.job_dir(user, "x").rsplit("/", 1)[0]))
    listing = loc.fs.get_file_info(pafs.FileSelector(loc.path, allow_not_found=True))
    ids = sorted(i.base_name for i in listing if i.type == pafs.FileType.Directory and _APP_DIR.fullmatch(i.base_name))
    docs = {}
    for app_id in ids:
        doc = read_saved(user, app_id)
        if doc is not None:
            docs[app_id] = doc
    return docs
