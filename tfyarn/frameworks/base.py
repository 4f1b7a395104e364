"""What a framework means to tfyarn: the generic behaviour every framework starts from.

One object per framework (tensorflow.py, pytorch.py, none.py) answers every
framework question in one place, for both sides: the client's spec checks
and plan (roles, rules, default commands, processes per container) and the
executor's task (environment, command, when the reserved port is released).
Pure: nothing here imports TensorFlow, torch or the appmaster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tfyarn.errors import SpecError

if TYPE_CHECKING:
    from tfyarn.spec import JobSpec, RoleSpec

# role -> addresses ("host:port") of its tasks, by index, as the AM publishes them
ClusterView = Mapping[str, Sequence[str]]


@dataclass(frozen=True)
class Elastic:
    """An elastic task's launch: torchrun's --nnodes MIN:MAX and --max-restarts, the AM's rendezvous store.

    ``to_env``/``from_env`` carry the first three to the executor
    (protocol.ENV_ELASTIC); it adds where the store is, the address its node
    is reached at, and whether tfyarn's agent wrapper can run (not inside a
    Docker image, which may not hold tfyarn).
    """

    min_nodes: int
    max_nodes: int
    max_restarts: int
    endpoint: str = ""  # host:port of the c10d store the AM hosts
    local_addr: str = ""  # this node's address, which peers reach (torchrun --local-addr)
    report: bool = True  # run appmaster.executor.elastic_agent, which reports each rendezvous round

    def to_env(self) -> str:
        return f"{self.min_nodes}:{self.max_nodes}:{self.max_restarts}"

    @classmethod
    def from_env(cls, text: str | None) -> Elastic | None:
        if not text:
            return None
        low, high, restarts = (int(x) for x in text.split(":"))
        return cls(low, high, restarts)


def one_process_per_container(name: str, role: RoleSpec) -> None:
    """Only torchrun starts several processes in a container; elsewhere nproc_per_node is a mistake."""
    if role.nproc_per_node:
        raise SpecError(f"roles.{name}.nproc_per_node: only pytorch workers run several processes")


class Framework:
    """The defaults: one process per container, the job's command, no framework variables."""

    name: str = ""
    # The role names this framework gives meaning to (the CLI has --ROLE-* flags for them).
    roles: tuple[str, ...] = ()
    # The variables task_env sets: a job's --env may not set them (tfyarn.fields).
    env_names: tuple[str, ...] = ()
    # True: the executor closes the task's reserved port right before the command starts, so the
    # command can bind it. False: it stays held (SO_REUSEPORT) until the command exits, so nothing
    # else takes it meanwhile; the framework's server must bind it with SO_REUSEPORT too.
    releases_port_before_command: bool = True

    def validate(self, job: JobSpec) -> None:
        """Raise SpecError naming the first role that breaks this framework's rules."""

    def default_command(self, job: JobSpec, role: str) -> tuple[str, ...]:
        """What ``role`` runs when neither it nor the job gives a command of its own; () for none."""
        return ()

    def required_roles(self, job: JobSpec) -> frozenset[str]:
        """Roles whose every task must exit 0 for the job to succeed: by default every role with tasks."""
        return frozenset(r for r in job.roles if job.count(r))

    def tolerated_roles(self, job: JobSpec) -> frozenset[str]:
        """Roles whose failure does not fail the job."""
        return frozenset()

    def processes(self, role: RoleSpec) -> int:
        """Processes per container of ``role``; the executor splits the container's threads among them."""
        return 1

    def task_env(
        self, role: str, index: int, view: ClusterView, nproc: int, elastic: Elastic | None = None
    ) -> dict[str, str]:
        """The framework's own variables for task ``role:index``, from the cluster view."""
        return {}

    def wrap_command(
        self,
        command: Sequence[str],
        index: int,
        view: ClusterView,
        nproc: int,
        run_id: str,
        elastic: Elastic | None = None,
    ) -> list[str]:
        """The argv the executor runs for ``command``: as given, unless the framework launches it."""
        return list(command)

    def __repr__(self) -> str:
        return f"<framework {self.name}>"
