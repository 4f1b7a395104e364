"""``tensorflow``: TF_CONFIG for every task; ParameterServerStrategy or MultiWorkerMirroredStrategy.

With ps tasks the job is ParameterServerStrategy: the chief drives the
training loop, ps and workers only serve (a standard TF server is their
default command), and the chief's exit decides the job. Without ps every
task runs the user's command and every chief/worker must succeed.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from tfyarn.errors import SpecError
from tfyarn.frameworks.base import ClusterView, Elastic, Framework, one_process_per_container

if TYPE_CHECKING:
    from tfyarn.spec import JobSpec

ROLES = ("chief", "worker", "ps", "evaluator")
# ParameterServerStrategy's ps and workers only serve: a standard TF server is their default command.
SERVER_COMMAND: tuple[str, ...] = ("python", "-m", "appmaster.executor.tf_server")
SERVER_ROLES = ("ps", "worker")


class TensorFlow(Framework):
    name = "tensorflow"
    roles = ROLES
    env_names = ("TF_CONFIG",)
    # The reserved port stays held while the command runs: the TF server (gRPC) binds it with
    # SO_REUSEPORT too, so no other process can take it between the rendezvous and the bind.
    releases_port_before_command = False

    @staticmethod
    def ps_mode(job: JobSpec) -> bool:
        """ParameterServerStrategy: the job has ps tasks."""
        return job.count("ps") > 0

    def validate(self, job: JobSpec) -> None:
        for name, role in job.roles.items():
            if name not in ROLES:
                raise SpecError(f"roles.{name}: tensorflow roles are {', '.join(ROLES)}")
            one_process_per_container(name, role)
        for name in ("chief", "evaluator"):
            if job.count(name) > 1:
                raise SpecError(
                    f"roles.{name}.instances: a tensorflow job has at most one {name}, got {job.count(name)}"
                )
        if job.count("chief") + job.count("worker") < 1:
            raise SpecError("roles.worker.instances: a tensorflow job needs a chief or at least one worker")
        if job.count("ps") and not job.count("chief"):
            raise SpecError(
                "roles.chief.instances: a ParameterServerStrategy job (ps > 0) needs a chief "
                "to run the training loop; add --chief"
            )

    def default_command(self, job: JobSpec, role: str) -> tuple[str, ...]:
        return SERVER_COMMAND if self.ps_mode(job) and role in SERVER_ROLES else ()

    def required_roles(self, job: JobSpec) -> frozenset[str]:
        """With ps: only the chief (the servers never exit on their own); else every chief and worker."""
        if self.ps_mode(job):
            return frozenset({"chief"})
        return frozenset(r for r in job.roles if r in ("chief", "worker") and job.count(r))

    def tolerated_roles(self, job: JobSpec) -> frozenset[str]:
        return frozenset({"evaluator"}) if job.evaluator_may_fail else frozenset()

    def task_env(
        self, role: str, index: int, view: ClusterView, nproc: int, elastic: Elastic | None = None
    ) -> dict[str, str]:
        """TF_CONFIG. The evaluator is left out of ``cluster``: TF2's
        ParameterServerStrategy rejects a cluster that lists it."""
        cluster = {r: list(addrs) for r, addrs in view.items() if r != "evaluator" and addrs}
        return {"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": role, "index": index}})}


TENSORFLOW = TensorFlow()
