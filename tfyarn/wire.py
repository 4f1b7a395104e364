"""Every document that crosses a process boundary, typed: built and parsed here and nowhere else.

The AM's status document (its page's JSON, the key-value copy, the final
log line, status.json on HDFS), what `tfyarn status --json` prints, the
executor's key-value records and the cluster view are frozen dataclasses.
``from_dict`` checks every field's type and ignores fields it does not know
(a newer tfyarn may add some); a status document saved before
``schema_version`` existed parses as version 0. Within a schema version,
fields are only ever added; a version newer than this module reads is
refused, with a message saying to upgrade. Shared by the client, the AM and
the executor, so it imports only the standard library and tfyarn's protocol
and status modules.
"""

from __future__ import annotations

import json
import types
from dataclasses import MISSING, dataclass, field, fields, is_dataclass, replace
from enum import Enum
from functools import cache
from typing import Any, ClassVar, TypeVar, Union, cast, get_args, get_origin, get_type_hints

from tfyarn import protocol
from tfyarn.status import JobReport, TaskState

SCHEMA_VERSION = 1  # of the status document; bumped only by a change that is not an added field
_UNVERSIONED = 0  # what a status document written before schema_version existed parses as

T = TypeVar("T")
W = TypeVar("W", bound="Wire")


class WireError(ValueError):
    """A document that does not have the fields and types this tfyarn expects."""


# --- the generic codec: field types drive both directions ----------------------------------------
def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _type_name(tp: Any) -> str:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        return " or ".join("null" if a is type(None) else _type_name(a) for a in get_args(tp))
    if origin is tuple:
        return f"a list of {_type_name(get_args(tp)[0])}"
    if origin is dict:
        return f"an object of {_type_name(get_args(tp)[1])}"
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}
    name = str(getattr(tp, "__name__", tp))
    return names.get(tp) or (f"an object ({name})" if is_dataclass(tp) else name)


@cache
def _hints(cls: Any) -> dict[str, Any]:
    return get_type_hints(cls)


def _decode(tp: Any, value: Any, where: str) -> Any:
    """``value`` (parsed JSON) as type ``tp``; WireError naming ``where`` if it is not one."""
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = get_args(tp)
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        try:
            return _decode(inner, value, where)
        except WireError as e:
            if str(e).startswith(f"{where}: "):  # this value, not one inside it: say null would do
                raise WireError(f"{where}: expected {_type_name(tp)}, got {_show(value)}") from None
            raise
    bad = WireError(f"{where}: expected {_type_name(tp)}, got {_show(value)}")
    if origin is tuple:
        if not isinstance(value, list):
            raise bad
        return tuple(_decode(get_args(tp)[0], v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise bad
        return {k: _decode(get_args(tp)[1], v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(tp, type) and issubclass(tp, Enum):
        try:
            return tp(value)
        except ValueError:
            raise WireError(f"{where}: expected one of {', '.join(m.value for m in tp)}, got {_show(value)}") from None
    if is_dataclass(tp):
        return _from_dict(tp, value, where)  # type: ignore[arg-type]
    if tp is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if tp is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if tp in (str, bool) and isinstance(value, tp):
        return value
    raise bad


def _from_dict(cls: type[T], data: Any, where: str) -> T:
    if not isinstance(data, dict):
        raise WireError(f"{where}: expected {_type_name(cls)}, got {_show(data)}")
    hints, kwargs = _hints(cast(Any, cls)), {}
    for f in fields(cast(Any, cls)):
        if f.name in data:
            kwargs[f.name] = _decode(hints[f.name], data[f.name], f"{where}.{f.name}")
        elif f.default is MISSING and f.default_factory is MISSING:
            raise WireError(f"{where}: missing field {f.name!r}")
    return cls(**kwargs)


def _encode(value: Any) -> Any:
    """A dataclass, enum, tuple or dict as plain JSON values."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Wire):
        return value.to_dict()
    if isinstance(value, (tuple, list)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


def _loads(raw: str | bytes, what: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError as e:
        raise WireError(f"{what}: not JSON ({e})") from None


class Wire:
    """A dataclass that travels as JSON: ``to_dict``/``to_json`` and the checking ``from_dict``/``from_json``."""

    WHAT: ClassVar[str] = "document"  # how errors name it

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _encode(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls: type[W], data: Any) -> W:
        return _from_dict(cls, data, cls.WHAT)

    @classmethod
    def from_json(cls: type[W], raw: str | bytes) -> W:
        return cls.from_dict(_loads(raw, cls.WHAT))


def public_fields(cls: type[Any]) -> tuple[str, ...]:
    """The JSON names of a wire dataclass, in order (docs/monitoring.md documents exactly these)."""
    return tuple(f.name for f in fields(cls))


# --- the AM's status document -------------------------------------------------------------------
@dataclass(frozen=True)
class GpuSample(Wire):
    """One GPU's utilisation and memory, as NVML reported them."""

    WHAT = "GPU sample"
    index: int
    util_pct: int
    mem_used_mib: int
    mem_total_mib: int


@dataclass(frozen=True, kw_only=True)
class Progress(Wire):
    """A task's latest tfyarn.report heartbeat: when, at which step, and its metrics."""

    WHAT = "progress"
    time: float  # when the executor received it, epoch seconds
    step: int | None = None
    metrics: dict[str, float] = field(default_factory=dict)  # each metric's newest value
    series: dict[str, tuple[float, ...]] = field(default_factory=dict)  # each metric's recent values, oldest first
    counts: dict[str, int] = field(default_factory=dict)  # how many values of each metric were reported in all


@dataclass(frozen=True, kw_only=True)
class TaskStatus(Wire):
    """One task as the status document shows it: only what users may read, never the AM's bookkeeping."""

    WHAT = "task"
    name: str
    role: str
    index: int
    state: TaskState
    host: str = ""
    node_http_address: str = ""
    address: str = ""
    yarn_container_id: str = ""
    restarts: int = 0
    exit_code: int | None = None
    exit_message: str = ""
    stderr_tail: str = ""
    staging_s: float | None = None
    staging_bytes: int | None = None
    gpus_asked: int = 0
    gpus: tuple[int, ...] = ()
    gpu_binding: str = ""
    timeline: dict[str, float] = field(default_factory=dict)
    telemetry: tuple[GpuSample, ...] = ()
    history: tuple[str, ...] = ()
    log_url: str = ""
    logs_dir_url: str = ""
    progress: Progress | None = None


@dataclass(frozen=True)
class TensorBoardStatus(Wire):
    WHAT = "tensorboard"
    state: str
    uri: str = ""


@dataclass(frozen=True)
class OutputStatus(Wire):
    WHAT = "output"
    src: str
    dest: str
    task: str = ""


@dataclass(frozen=True, kw_only=True)
class Event(Wire):
    """One job event for operators (appmaster.am.events): a restart, a lost node, a job-ending failure, the end."""

    WHAT = "event"
    kind: str  # task_restart, node_lost, task_failed, membership, exec, save, job_end
    time: float
    task: str = ""  # the task's name, for a task's event
    host: str = ""  # the node it was on
    message: str = ""


@dataclass(frozen=True, kw_only=True)
class StatusDoc(Wire):
    """The AM's status document: its page, its JSON, status.json on HDFS and `tfyarn status` show this."""

    WHAT = "status document"
    schema_version: int = SCHEMA_VERSION
    app_id: str
    name: str = ""
    framework: str = ""
    user: str = ""
    queue: str = ""
    state: str  # STARTING, RUNNING, then the job's final status
    diagnostics: str = ""
    time: float = 0.0
    attempt: int = 1
    job_restarts: int = 0
    duration_s: float = 0.0
    timeline: dict[str, float | None] = field(default_factory=dict)
    tasks: tuple[TaskStatus, ...] = ()
    tensorboard: TensorBoardStatus | None = None
    outputs: tuple[OutputStatus, ...] = ()
    events: tuple[Event, ...] = ()  # the newest appmaster.am.events.MAX_EVENTS, oldest first
    elastic: str = ""  # "MIN:MAX" of an elastic job's workers; "" for a gang
    world_size: int = 0  # elastic: the containers in the newest rendezvous round; 0 before the first

    @classmethod
    def from_dict(cls, data: Any) -> StatusDoc:
        """As Wire's, refusing a schema newer than this tfyarn reads; one without a version parses as 0."""
        version = data.get("schema_version", _UNVERSIONED) if isinstance(data, dict) else _UNVERSIONED
        if not isinstance(version, int) or isinstance(version, bool):
            raise WireError(f"{cls.WHAT}.schema_version: expected an integer, got {_show(version)}")
        if version > SCHEMA_VERSION:
            raise WireError(
                f"{cls.WHAT} has schema_version {version}, newer than this tfyarn reads "
                f"({SCHEMA_VERSION}): upgrade tfyarn"
            )
        doc = _from_dict(cls, data, cls.WHAT)
        return doc if "schema_version" in data else replace(doc, schema_version=_UNVERSIONED)

    def task(self, role: str, index: int) -> TaskStatus | None:
        return next((t for t in self.tasks if t.role == role and t.index == index), None)


# --- what `tfyarn status --json` prints ----------------------------------------------------------
# YARN's report of the job, whose values win over the AM's for the fields both have.
REPORT_FIELDS = (*public_fields(JobReport), "framework")
AM_FIELDS = tuple(f for f in public_fields(StatusDoc) if f not in REPORT_FIELDS and f != "schema_version")


def report_dict(rep: JobReport) -> dict[str, Any]:
    """YARN's report of one job as JSON values (also each entry of `tfyarn list --json`)."""
    return {**{f.name: _encode(getattr(rep, f.name)) for f in fields(rep)}, "framework": rep.framework}


@dataclass(frozen=True)
class JobStatus:
    """`tfyarn status --json`: YARN's report of the job, and the AM's status document when there is one.

    One flat object: the AM's fields (null until the AM has published a
    document) with YARN's report laid over the fields both have.
    """

    report: JobReport
    doc: StatusDoc | None = None

    def to_dict(self) -> dict[str, Any]:
        am = self.doc.to_dict() if self.doc else {}
        return {
            "schema_version": SCHEMA_VERSION,
            **report_dict(self.report),
            **{name: am.get(name) for name in AM_FIELDS},
        }

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Any) -> JobStatus:
        if not isinstance(data, dict):
            raise WireError(f"job status: expected an object, got {_show(data)}")
        known = {f.name: data[f.name] for f in fields(JobReport) if f.name in data}
        report = _from_dict(JobReport, known, "job status")
        doc = StatusDoc.from_dict(data) if data.get("tasks") is not None else None
        return cls(report, doc)

    @classmethod
    def from_json(cls, raw: str | bytes) -> JobStatus:
        return cls.from_dict(_loads(raw, "job status"))


# --- the executor's records and the AM's answers, in the key-value store ---------------------------
@dataclass(frozen=True)
class Registration(Wire):
    """kv_task_addr: the address a task reserved, and the devices YARN or Docker bound it, if any."""

    WHAT = "registration"
    address: str
    staging_s: float = 0.0
    container: str | None = None  # protocol.RECORD_CONTAINER: the YARN container that wrote it
    gpus: tuple[int, ...] | None = None  # None: nobody bound any, the AM binds
    gpu_binding: str = ""  # yarn | docker, with gpus
    staging_bytes: int = 0


@dataclass(frozen=True)
class EventsRecord(Wire):
    """kv_task_events: the task's startup stages, stage -> epoch seconds."""

    WHAT = "events record"
    stages: dict[str, float]
    container: str | None = None


@dataclass(frozen=True)
class TelemetryRecord(Wire):
    """kv_task_telemetry: the task's GPUs, sampled."""

    WHAT = "telemetry record"
    gpus: tuple[GpuSample, ...]
    time: float = 0.0
    container: str | None = None


@dataclass(frozen=True)
class ProgressRecord(Wire):
    """kv_task_progress: the task's last heartbeat and metrics, as the executor last published them."""

    WHAT = "progress record"
    progress: Progress
    container: str | None = None


@dataclass(frozen=True)
class MembershipRecord(Wire):
    """kv_task_membership: the last rendezvous round an elastic task's torchrun agent completed."""

    WHAT = "membership record"
    world_size: int  # nodes (containers) in the round: torchrun's group_world_size
    group_rank: int
    restart_count: int  # the agent's restarts so far (a failed peer costs one; a joining one does not)
    time: float
    container: str | None = None


@dataclass(frozen=True)
class ExitRecord(Wire):
    """kv_task_exit: how the task's command ended; the AM decides the task on it."""

    WHAT = "exit record"
    code: int
    stderr_tail: str = ""
    time: float = 0.0
    container: str | None = None


@dataclass(frozen=True)
class SnapshotRecord(Wire):
    """kv_task_snapshot: where the task's last output snapshot went."""

    WHAT = "snapshot record"
    uris: tuple[str, ...]
    time: float = 0.0


@dataclass(frozen=True, kw_only=True)
class ExecRequest(Wire):
    """kv_exec_in(task) + SESSION/request: what `tfyarn exec` asks a running task to run."""

    WHAT = "exec request"
    session: str
    task: str
    argv: tuple[str, ...]
    user: str  # who asked (only holders of the job's skein credentials can write here)
    time: float
    interactive: bool = False  # stdin is forwarded
    tty: bool = False  # the command gets a terminal
    rows: int = 0
    cols: int = 0


@dataclass(frozen=True, kw_only=True)
class ExecRecord(Wire):
    """KV_EXEC_RECORD_PREFIX + SESSION: one exec session, for the job's events; ``exit`` once it ended."""

    WHAT = "exec record"
    session: str
    task: str
    argv: tuple[str, ...]
    user: str
    tty: bool
    started: float
    exit_code: int | None = None
    message: str = ""  # why it ended, when not by itself (the task's command ended)


@dataclass(frozen=True)
class TaskRecords:
    """One task's executor records in the key-value store, those its current container wrote."""

    registration: Registration | None = None
    events: EventsRecord | None = None
    telemetry: TelemetryRecord | None = None
    exit: ExitRecord | None = None
    progress: ProgressRecord | None = None
    membership: MembershipRecord | None = None

    @classmethod
    def read(cls, kv: dict[str, bytes], role: str, index: int, container: str) -> TaskRecords:
        """Parse the task's records; one a replaced container wrote is stale, and left out."""
        found: dict[str, Any] = {}
        for name, key, kind in (
            ("registration", protocol.kv_task_addr(role, index), Registration),
            ("events", protocol.kv_task_events(role, index), EventsRecord),
            ("telemetry", protocol.kv_task_telemetry(role, index), TelemetryRecord),
            ("exit", protocol.kv_task_exit(role, index), ExitRecord),
            ("progress", protocol.kv_task_progress(role, index), ProgressRecord),
            ("membership", protocol.kv_task_membership(role, index), MembershipRecord),
        ):
            raw = kv.get(key)
            if raw:
                record = kind.from_json(raw)
                if record.container in (None, container):
                    found[name] = record
        return cls(**found)


@dataclass(frozen=True)
class GpuAssignment:
    """kv_task_gpus: the devices the AM told a task to use (a JSON list of indices)."""

    gpus: tuple[int, ...]

    def to_json(self) -> str:
        return json.dumps(list(self.gpus))

    @classmethod
    def from_json(cls, raw: str | bytes) -> GpuAssignment:
        return cls(_decode(tuple[int, ...], _loads(raw, "GPU assignment"), "GPU assignment"))


@dataclass(frozen=True)
class ClusterView:
    """KV_CLUSTER: role -> every task's address in index order, once the whole gang registered."""

    roles: dict[str, tuple[str, ...]]

    @classmethod
    def of(cls, view: dict[str, list[str]]) -> ClusterView:
        return cls({role: tuple(addrs) for role, addrs in view.items()})

    def to_json(self) -> str:
        return json.dumps({role: list(addrs) for role, addrs in self.roles.items()})

    @classmethod
    def from_json(cls, raw: str | bytes) -> ClusterView:
        return cls(_decode(dict[str, tuple[str, ...]], _loads(raw, "cluster view"), "cluster view"))
