"""What one task's executor is told: its role, index, command, staging plan.

A pure function of the job spec, so two paths agree: the AM passes it with
each container it asks for (restarts), and the executor of one of the
gang's first containers, which YARN starts straight from the application
spec while the AM is still starting, derives it from the spec itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from tfyarn import frameworks, protocol
from tfyarn.frameworks.base import Elastic
from tfyarn.spec import JobSpec


@dataclass(frozen=True)
class StagingPlan:
    """What one task moves, as the AM computed it from the job spec."""

    inputs: tuple[dict[str, str], ...] = ()  # {"src", "dest", "mode"}
    shard: tuple[int, int] | None = None  # (index, count) for sharded inputs
    outputs: tuple[dict[str, str], ...] = ()  # {"src", "dest"} this task publishes
    overwrite: bool = False
    download_threads: int = 10
    upload_threads: int = 10
    save_every: int = 0
    resume: bool = True  # a restarted output task first gets its outputs' latest snapshot of this job
    output_mode: int = 0o700  # published outputs: dirs this mode, files the same less x
    readers: tuple[str, ...] = ()  # users who may read the outputs (HDFS ACL entries); * for anyone

    def to_env(self) -> str:
        return protocol.encode_env(
            {
                "inputs": list(self.inputs),
                "shard": self.shard,
                "outputs": list(self.outputs),
                "overwrite": self.overwrite,
                "download_threads": self.download_threads,
                "upload_threads": self.upload_threads,
                "save_every": self.save_every,
                "resume": self.resume,
                "output_mode": self.output_mode,
                "readers": list(self.readers),
            }
        )

    @classmethod
    def from_env(cls, text: str | None) -> StagingPlan:
        if not text:
            return cls()
        d: dict[str, Any] = protocol.decode_env(text)
        return cls(
            tuple(d["inputs"]),
            tuple(d["shard"]) if d["shard"] else None,
            tuple(d["outputs"]),
            d["overwrite"],
            d["download_threads"],
            d["upload_threads"],
            d["save_every"],
            d.get("resume", True),  # a plan made before resume existed (a running job's AM)
            d.get("output_mode", 0o700),
            tuple(d.get("readers", ())),
        )


def job_user() -> str:
    return os.environ.get(protocol.ENV_USER) or os.environ.get(protocol.ENV_HADOOP_USER_NAME) or "unknown"


def tensorboard_uri(app_id: str) -> str:
    return f"{protocol.job_dir(job_user(), app_id)}/{protocol.TENSORBOARD_SUBDIR}"


def staging_plan(job: JobSpec, role: str, index: int) -> StagingPlan:
    """What one task downloads and publishes: all inputs (workers' sharded ones in slices), its outputs."""
    mine = protocol.task_name(role, index)
    return StagingPlan(
        inputs=tuple({"src": i.src, "dest": i.local_dir, "mode": i.mode} for i in job.inputs),
        shard=(index, job.count("worker")) if role == "worker" else None,
        outputs=tuple({"src": o.src, "dest": o.dest} for o in job.outputs if job.output_task(o) == mine),
        overwrite=job.overwrite,
        download_threads=job.download_threads,
        upload_threads=job.upload_threads,
        save_every=job.save_every,
        resume=job.resume,
        output_mode=int(job.output_mode, 8),
        readers=job.output_readers,
    )


def task_env(job: JobSpec, role: str, index: int, app_id: str, previous_address: str = "") -> dict[str, str]:
    """The variables that tell an executor which task it runs."""
    env = {
        protocol.ENV_ROLE: role,
        protocol.ENV_TASK_INDEX: str(index),
        protocol.ENV_NUM_TASKS: str(job.roles[role].instances),
        protocol.ENV_COMMAND: protocol.encode_env(list(job.command_for(role))),
        protocol.ENV_APP_ID: app_id,
        protocol.ENV_FRAMEWORK: job.framework,
        # Only pytorch runs several processes per container (torchrun); a TensorFlow task is one
        # process whatever its GPU count, and gets all of its container's threads.
        protocol.ENV_NPROC_PER_NODE: str(frameworks.get(job.framework).processes(job.roles[role])),
        protocol.ENV_STAGING: staging_plan(job, role, index).to_env(),
    }
    if job.env:
        env[protocol.ENV_USER_ENV] = protocol.encode_env(dict(job.env))
    spec = job.roles[role]
    if spec.elastic:  # a lost peer costs each survivor's agent one restart: room for every task's replacements
        restarts = max(1, spec.max_restarts) * spec.instances
        env[protocol.ENV_ELASTIC] = Elastic(spec.min_instances, spec.instances, restarts).to_env()
    if timeout := job.progress_timeout_for(role):
        env[protocol.ENV_PROGRESS_TIMEOUT] = str(timeout)
    if job.tensorboard:
        env[protocol.ENV_TENSORBOARD_URI] = f"{tensorboard_uri(app_id)}/{role}-{index}"
    if previous_address:
        env[protocol.ENV_PREVIOUS_ADDRESS] = previous_address
    return env


def initial_container_id(role: str, index: int) -> str:
    """skein's id of the container it starts from the spec for task ``index`` (instances are numbered 0..n-1)."""
    return f"{role}_{index}"


def from_container(environ: dict[str, str]) -> dict[str, str]:
    """An initial container's task variables, from skein's container id and the job spec in its env.

    Empty when the AM already set them (a container it asked for itself).
    """
    if protocol.ENV_ROLE in environ:
        return {}
    role, _, instance = environ[protocol.ENV_SKEIN_CONTAINER_ID].rpartition("_")
    job = JobSpec.from_dict(protocol.decode_env(environ[protocol.ENV_JOB]))
    return task_env(job, role, int(instance), environ[protocol.ENV_SKEIN_APP_ID])
