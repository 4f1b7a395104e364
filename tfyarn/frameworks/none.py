"""``none``: plain distributed processes; each task learns only who it is (TFYARN_ROLE, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tfyarn.errors import SpecError
from tfyarn.frameworks.base import Framework, one_process_per_container

if TYPE_CHECKING:
    from tfyarn.spec import JobSpec

# Role names that mean something only to TensorFlow: a none job that gives them tasks is a mistake.
TENSORFLOW_ONLY_ROLES = ("chief", "ps", "evaluator")


class NoFramework(Framework):
    """Any role names but TensorFlow's own; every task runs the job's command."""

    name = "none"
    roles = ("worker",)

    def validate(self, job: JobSpec) -> None:
        for name in TENSORFLOW_ONLY_ROLES:
            if job.count(name):
                raise SpecError(f"roles.{name}.instances: the {name} role needs --framework tensorflow")
        for name, role in job.roles.items():
            one_process_per_container(name, role)
        if "worker" in job.roles and job.count("worker") < 1:
            raise SpecError("roles.worker.instances: must be at least 1, got 0")


NONE = NoFramework()
