"""The AM's table of tasks: pure bookkeeping and the job-end rules.

Kept free of skein calls so the rules can be unit-tested and benchmarked
without a cluster. The rules come from the spec (JobSpec.required_roles,
tolerated_roles): TF ParameterServerStrategy succeeds when its chief does;
multi-worker TF, DDP and plain jobs need every task to succeed; a failure
anywhere else fails the job at once.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tfyarn import protocol
from tfyarn.spec import JobSpec
from tfyarn.status import TaskState


@dataclass
class Task:
    role: str
    index: int
    state: TaskState = TaskState.WAITING
    container_id: str = ""  # skein's id, e.g. "worker_0"
    yarn_container_id: str = ""
    host: str = ""
    node_http_address: str = ""
    address: str = ""  # host:port it registered
    staging_s: float | None = None  # seconds its inputs took to download
    exit_code: int | None = None
    stderr_tail: str = ""
    exit_message: str = ""
    gpus_asked: int = 0
    gpus: list[int] = field(default_factory=list)  # physical device indices it is bound to
    gpu_binding: str = ""  # who bound them: yarn | docker | tfyarn (the AM's fallback)
    restarts: int = 0
    timeline: dict[str, float] = field(default_factory=dict)  # stage -> epoch seconds
    telemetry: list[dict[str, Any]] = field(default_factory=list)  # per GPU: util_pct, mem_used_mib, ...

    @property
    def name(self) -> str:
        return protocol.task_name(self.role, self.index)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["state"] = self.state.value
        d["name"] = self.name
        return d


@dataclass
class TaskTable:
    tasks: list[Task] = field(default_factory=list)
    required: frozenset[str] = frozenset()
    tolerated: frozenset[str] = frozenset()

    @classmethod
    def for_job(cls, job: JobSpec) -> TaskTable:
        tasks = [Task(role.name, i, gpus_asked=role.gpus) for role in job.roles.values()
                 for i in range(role.instances)]
        return cls(tasks, job.required_roles(), job.tolerated_roles())

    def all_registered(self) -> bool:
        return all(t.address for t in self.tasks)

    def cluster_view(self) -> dict[str, list[str]]:
        """role -> registered addresses in index order (for TF_CONFIG / MASTER_ADDR)."""
        view: dict[str, list[str]] = {}
        for t in sorted(self.tasks, key=lambda t: (t.role, t.index)):
            view.setdefault(t.role, []).append(t.address)
        return view

    def outcome(self) -> tuple[str, str] | None:
        """(final status, diagnostics) once the job is decided, else None."""
        for t in self.tasks:
            if t.state in (TaskState.FAILED, TaskState.KILLED) and t.role not in self.tolerated:
                why = f"exit code {t.exit_code}" if t.exit_code is not None else (t.exit_message or t.state.value)
                diag = f"task {t.name} failed ({why}) on {t.host or 'unknown host'}"
                if t.stderr_tail:
                    diag += f"; its stderr ends:\n{t.stderr_tail}"
                return "FAILED", diag
        required = [t for t in self.tasks if t.role in self.required]
        if required and all(t.state == TaskState.SUCCEEDED for t in required):
            names = sorted({t.role for t in required})
            return "SUCCEEDED", f"all {len(required)} {'/'.join(names)} task(s) succeeded"
        return None
