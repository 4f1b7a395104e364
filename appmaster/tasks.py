"""The AM's table of tasks: pure bookkeeping, driven by container updates.

Kept free of skein calls so the job-end rules can be unit-tested and
benchmarked without a cluster.
"""
from __future__ import annotations

from dataclasses import dataclass, field

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
    exit_code: int | None = None
    stderr_tail: str = ""
    exit_message: str = ""

    @property
    def name(self) -> str:
        return protocol.task_name(self.role, self.index)


@dataclass
class TaskTable:
    tasks: list[Task] = field(default_factory=list)

    @classmethod
    def for_job(cls, job: JobSpec) -> TaskTable:
        return cls([Task(role.name, i) for role in job.roles.values() for i in range(role.instances)])

    def by_container(self, container_id: str) -> Task | None:
        for t in self.tasks:
            if t.container_id == container_id:
                return t
        return None

    def failed(self) -> list[Task]:
        return [t for t in self.tasks if t.state in (TaskState.FAILED, TaskState.KILLED)]

    def all_succeeded(self) -> bool:
        return all(t.state == TaskState.SUCCEEDED for t in self.tasks)

    def outcome(self) -> tuple[str, str] | None:
        """(final status, diagnostics) once the job is decided, else None.

        Every task must succeed; the first failure decides the job at once.
        """
        failed = self.failed()
        if failed:
            t = failed[0]
            why = f"exit code {t.exit_code}" if t.exit_code is not None else (t.exit_message or t.state.value)
            diag = f"task {t.name} failed ({why}) on {t.host or 'unknown host'}"
            if t.stderr_tail:
                diag += f"; its stderr ends:\n{t.stderr_tail}"
            return "FAILED", diag
        if self.all_succeeded():
            return "SUCCEEDED", f"all {len(self.tasks)} task(s) succeeded"
        return None
