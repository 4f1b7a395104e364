"""The AM's table of tasks: pure bookkeeping, the job-end rules, restarts and timeouts.

Kept free of skein calls so the rules can be unit-tested and benchmarked
without a cluster. The rules come from the spec (JobSpec.required_roles,
tolerated_roles, each role's restart policy): TF ParameterServerStrategy
succeeds when its chief does; multi-worker TF, DDP and plain jobs need
every task to succeed; a failure that no restart policy covers fails the
job at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tfyarn import protocol
from tfyarn.spec import JobSpec, RoleSpec
from tfyarn.status import TaskState
from tfyarn.wire import GpuSample, MembershipRecord, Progress, TaskStatus

RESTART = "restart"  # this task, in a new container
RESTART_ALL = "restart-all"  # every task, with a fresh rendezvous
FAIL = "fail"
DROP = "drop"  # an elastic task given up: the group goes on without it while it keeps its minimum


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
    staging_bytes: int | None = None  # and how many bytes they were
    exit_code: int | None = None
    stderr_tail: str = ""
    exit_message: str = ""
    gpus_asked: int = 0
    gpus: list[int] = field(default_factory=list)  # physical device indices it is bound to
    gpu_binding: str = ""  # who bound them: yarn | docker | tfyarn (the AM's fallback) | none
    restarts: int = 0
    timeline: dict[str, float] = field(default_factory=dict)  # stage -> epoch seconds
    telemetry: tuple[GpuSample, ...] = ()  # per GPU: its last sample
    progress: Progress | None = None  # its script's last heartbeat (tfyarn.report.progress/metric)
    requested_at: float | None = None  # when its current container was asked for
    restart_at: float | None = None  # RESTARTING: when to ask for the new container
    previous_address: str = ""  # where it ran before a restart (it rejoins there if it can)
    history: list[str] = field(default_factory=list)  # one line per earlier incarnation
    dropped: bool = False  # an elastic task given up after its failure (DROP): no longer handled
    membership: MembershipRecord | None = None  # elastic: the last rendezvous round its agent completed

    @property
    def name(self) -> str:
        return protocol.task_name(self.role, self.index)

    def status(self, log_url: str = "", logs_dir_url: str = "") -> TaskStatus:
        """What the status document shows of this task: its public fields, named one by one.

        The AM's bookkeeping (container_id, requested_at, restart_at,
        previous_address) stays out: users read the document, and what it
        holds is a promise (docs/monitoring.md, "Status document").
        """
        return TaskStatus(
            name=self.name,
            role=self.role,
            index=self.index,
            state=self.state,
            host=self.host,
            node_http_address=self.node_http_address,
            address=self.address,
            yarn_container_id=self.yarn_container_id,
            restarts=self.restarts,
            exit_code=self.exit_code,
            exit_message=self.exit_message,
            stderr_tail=self.stderr_tail,
            staging_s=self.staging_s,
            staging_bytes=self.staging_bytes,
            gpus_asked=self.gpus_asked,
            gpus=tuple(self.gpus),
            gpu_binding=self.gpu_binding,
            timeline=dict(self.timeline),
            telemetry=self.telemetry,
            progress=self.progress,
            history=tuple(self.history),
            log_url=log_url,
            logs_dir_url=logs_dir_url,
        )

    def reset(self, restart_at: float, keep_address: bool) -> None:
        """Forget the failed container; a new one is requested at ``restart_at``."""
        why = f"exit code {self.exit_code}" if self.exit_code is not None else (self.exit_message or self.state.value)
        self.history.append(
            f"{self.yarn_container_id or 'no container'} on {self.host or '?'}: {self.state.value} ({why})"
        )
        self.previous_address = self.address if keep_address else ""
        self.restarts += 1
        self.state, self.restart_at = TaskState.RESTARTING, restart_at
        self.container_id = self.yarn_container_id = self.host = self.node_http_address = self.address = ""
        self.staging_s = self.staging_bytes = self.exit_code = self.requested_at = None
        self.stderr_tail = self.exit_message = self.gpu_binding = ""
        self.gpus, self.telemetry, self.timeline, self.progress = [], (), {}, None
        self.membership = None

    @property
    def member(self) -> bool:
        """Registered and running: a member of the training group (of its rendezvous, when elastic)."""
        return self.state == TaskState.RUNNING and bool(self.address)


@dataclass
class TaskTable:
    tasks: list[Task] = field(default_factory=list)
    required: frozenset[str] = frozenset()
    tolerated: frozenset[str] = frozenset()
    roles: dict[str, RoleSpec] = field(default_factory=dict)
    job_restarts: int = 0  # whole-job restarts under the `all` policy
    elastic: RoleSpec | None = None  # the elastic role (pytorch's workers), if any
    below_min_since: float | None = None  # elastic: since when fewer than its minimum have been members

    @classmethod
    def for_job(cls, job: JobSpec) -> TaskTable:
        tasks = [Task(role.name, i, gpus_asked=role.gpus) for role in job.roles.values() for i in range(role.instances)]
        return cls(tasks, job.required_roles(), job.tolerated_roles(), dict(job.roles), elastic=job.elastic_role)

    def all_registered(self) -> bool:
        return all(t.address for t in self.tasks)

    def ready(self) -> bool:
        """Whether training may start: every task registered; elastic, at least its minimum."""
        if self.elastic is None:
            return self.all_registered()
        return len(self.members()) >= self.elastic.min_instances

    def members(self) -> list[Task]:
        """The elastic role's tasks in the training group now."""
        return [t for t in self.tasks if self.elastic and t.role == self.elastic.name and t.member]

    def world_size(self) -> int:
        """Elastic: the group size of the newest rendezvous round a member completed; 0 before any."""
        rounds = [t.membership for t in self.members() if t.membership]
        return max(rounds, key=lambda m: m.time).world_size if rounds else 0

    def cluster_view(self) -> dict[str, list[str]]:
        """role -> registered addresses in index order (for TF_CONFIG / MASTER_ADDR)."""
        view: dict[str, list[str]] = {}
        for t in sorted(self.tasks, key=lambda t: (t.role, t.index)):
            view.setdefault(t.role, []).append(t.address)
        return view

    # -- failures and restarts ----------------------------------------------------
    def failed(self) -> list[Task]:
        """Tasks that ended badly and are not yet handled."""
        return [t for t in self.tasks if t.state in (TaskState.FAILED, TaskState.KILLED) and not t.dropped]

    def failure_action(self, task: Task) -> str:
        """What ``task``'s failure means under its role's restart policy.

        An elastic task is replaced alone (on-failure) or given up (DROP): the
        group goes on without it; ``outcome`` and ``below_min`` decide the job.
        """
        role = self.roles.get(task.role)
        if role is not None and role.elastic:
            replace = role.restart_policy == "on-failure" and task.exit_code not in role.permanent_exit_codes
            return RESTART if replace and task.restarts < role.max_restarts else DROP
        if role is None or role.restart_policy == "never" or task.exit_code in role.permanent_exit_codes:
            return FAIL
        if role.restart_policy == "on-failure":
            return RESTART if task.restarts < role.max_restarts else FAIL
        return RESTART_ALL if self.job_restarts < role.max_restarts else FAIL

    def backoff_s(self, task: Task, restarts: int) -> float:
        role = self.roles[task.role]
        return float(role.restart_backoff_s * 2**restarts)

    def due_restarts(self, now: float) -> list[Task]:
        return [t for t in self.tasks if t.state == TaskState.RESTARTING and (t.restart_at or 0) <= now]

    # -- gang timeouts ------------------------------------------------------------
    def timed_out(
        self, now: float, allocation_timeout_s: float, registration_timeout_s: float, free: str = ""
    ) -> str | None:
        """Why the gang cannot start in time, or None. ``free`` says what the cluster has free."""
        elastic_enough = self.elastic is not None and self.allocated(self.elastic.name) >= self.elastic.min_instances
        waiting = [
            t
            for t in self.tasks
            if t.state in (TaskState.WAITING, TaskState.REQUESTED)
            and t.requested_at is not None
            and now - t.requested_at > allocation_timeout_s
            and not (elastic_enough and self.elastic and t.role == self.elastic.name)  # the rest may wait
        ]
        if waiting:
            parts = []
            for role in dict.fromkeys(t.role for t in waiting):
                n = sum(1 for t in waiting if t.role == role)
                total = sum(1 for t in self.tasks if t.role == role)
                spec = self.roles.get(role)
                ask = f"each asks {spec.memory_mb} MiB, {spec.vcores} vcore(s), {spec.gpus} GPU(s)" if spec else ""
                parts.append(
                    f"{n} of {total} {role} container(s) not allocated after {allocation_timeout_s:.0f} s ({ask})"
                )
            return "; ".join(parts) + (f"; {free}" if free else "")
        late = [
            t
            for t in self.tasks
            if t.state == TaskState.RUNNING
            and not t.address
            and t.timeline.get("allocated")
            and now - t.timeline["allocated"] > registration_timeout_s
        ]
        if late:
            names = ", ".join(f"{t.name} on {t.host or '?'}" for t in late)
            return (
                f"{len(late)} task(s) not registered {registration_timeout_s:.0f} s after their container "
                f"started ({names}): staging inputs or starting the executor took too long; see their logs"
            )
        return None

    def allocated(self, role: str) -> int:
        """``role``'s tasks that have a running container."""
        return sum(1 for t in self.tasks if t.role == role and t.state == TaskState.RUNNING)

    def below_min(self, now: float, started: bool) -> str | None:
        """Elastic: why the job fails, once fewer than its minimum have trained for its timeout; else None.

        The clock runs only after training started (``started``: the first
        rendezvous was published); before that, the allocation timeout rules.
        """
        role = self.elastic
        if role is None or not started:
            return None
        members = len(self.members())
        if members >= role.min_instances:
            self.below_min_since = None
            return None
        if self.below_min_since is None:
            self.below_min_since = now
        if now - self.below_min_since <= role.below_min_timeout_s:
            return None
        return (
            f"only {members} of the minimum {role.min_instances} {role.name}(s) trained for "
            f"{now - self.below_min_since:.0f} s (below_min_timeout_s {role.below_min_timeout_s}): "
            "YARN did not grant replacements in time; see the events for the ones lost"
        )

    # -- the job's end --------------------------------------------------------------
    def outcome(self) -> tuple[str, str] | None:
        """(final status, diagnostics) once the job is decided, else None."""
        if self.elastic is not None:
            return self._elastic_outcome(self.elastic.name)
        for t in self.tasks:
            if t.state in (TaskState.FAILED, TaskState.KILLED) and t.role not in self.tolerated:
                why = f"exit code {t.exit_code}" if t.exit_code is not None else (t.exit_message or t.state.value)
                diag = f"task {t.name} failed ({why}) on {t.host or 'unknown host'}"
                if t.restarts:
                    diag += f" after {t.restarts} restart(s)"
                if t.stderr_tail:
                    diag += f"; its stderr ends:\n{t.stderr_tail}"
                return "FAILED", diag
        required = [t for t in self.tasks if t.role in self.required]
        if required and all(t.state == TaskState.SUCCEEDED for t in required):
            names = sorted({t.role for t in required})
            restarts = sum(t.restarts for t in self.tasks)
            note = f" ({restarts} task restart(s))" if restarts else ""
            return "SUCCEEDED", f"all {len(required)} {'/'.join(names)} task(s) succeeded{note}"
        return None

    def _elastic_outcome(self, role: str) -> tuple[str, str] | None:
        """An elastic group succeeds when a task succeeded and no member still trains (torchrun's agents
        end together); it fails when every task was given up without a success."""
        tasks = [t for t in self.tasks if t.role == role]
        done = [t for t in tasks if t.state == TaskState.SUCCEEDED]
        if done and not any(t.member for t in tasks):
            lost = sum(t.restarts for t in tasks) + sum(1 for t in tasks if t.dropped)
            note = f" ({lost} lost and replaced or given up on the way)" if lost else ""
            return "SUCCEEDED", f"{len(done)} elastic {role} task(s) succeeded{note}"
        if not done and tasks and all(t.dropped for t in tasks):
            last = max(tasks, key=lambda t: t.restarts)
            diag = f"every elastic {role} task failed; the last, {last.name}, with {why(last)} on {last.host or '?'}"
            if last.stderr_tail:
                diag += f"; its stderr ends:\n{last.stderr_tail}"
            return "FAILED", diag
        return None


def why(t: Task) -> str:
    """How a task's container ended: its exit code, else YARN's message, else its state."""
    return f"exit code {t.exit_code}" if t.exit_code is not None else (t.exit_message or t.state.value)
