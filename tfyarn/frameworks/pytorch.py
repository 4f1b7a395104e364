"""``pytorch``: DDP workers, given the variables torchrun sets, or launched by torchrun itself.

One process per container gets torchrun's variables directly, so a
torchrun script runs unchanged; several per container run under
``torch.distributed.run`` with a static rendezvous on rank 0's reserved port.
Elastic workers (``--num-workers MIN:MAX``) always run under torchrun's
elastic agent, with a c10d rendezvous on the store the AM hosts.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tfyarn import protocol
from tfyarn.errors import SpecError
from tfyarn.frameworks.base import ClusterView, Elastic, Framework

if TYPE_CHECKING:
    from tfyarn.spec import JobSpec, RoleSpec


class PyTorch(Framework):
    name = "pytorch"
    roles = ("worker",)
    env_names = (
        "MASTER_ADDR",
        "MASTER_PORT",
        "RANK",
        "WORLD_SIZE",
        "LOCAL_RANK",
        "LOCAL_WORLD_SIZE",
        "GROUP_RANK",
        "NODE_RANK",
        "ROLE_RANK",
        "ROLE_WORLD_SIZE",
    )
    # Released: MASTER_PORT (or torchrun's c10d store) is rank 0's reserved port, bound by the command.
    releases_port_before_command = True

    def validate(self, job: JobSpec) -> None:
        for name in job.roles:  # the CLI's other roles are present with 0 instances: only tasks count
            if name == "ps" and job.count("ps"):
                raise SpecError("roles.ps.instances: pytorch jobs have no parameter servers; remove --num-ps")
            if name == "evaluator" and job.count("evaluator"):
                raise SpecError("roles.evaluator.instances: pytorch jobs have no evaluator; remove --evaluator")
            if name not in ("worker", "ps", "evaluator"):
                raise SpecError(f"roles.{name}: pytorch jobs have only the worker role")
        if job.count("worker") < 1:
            raise SpecError("roles.worker.instances: must be at least 1, got 0")

    def processes(self, role: RoleSpec) -> int:
        """nproc_per_node, else one per GPU, else 1."""
        return role.nproc_per_node or role.gpus or 1

    def task_env(
        self, role: str, index: int, view: ClusterView, nproc: int, elastic: Elastic | None = None
    ) -> dict[str, str]:
        """The variables torchrun would set, so a torchrun script runs unchanged.

        With several processes per container torchrun itself sets the per-process
        ranks; only the node-level variables are given here. Elastic: torchrun's
        agent sets them all, anew each round; only its store sharing is turned
        off (TORCH_DISABLE_SHARE_RDZV_TCP_STORE: with it on, a node that joins a
        running group waits for a master address the others never publish).
        """
        if elastic:
            return {"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"}
        workers = list(view["worker"])
        master_addr, master_port = workers[0].rsplit(":", 1)
        env = {
            "MASTER_ADDR": master_addr,
            "MASTER_PORT": master_port,
            "GROUP_RANK": str(index),
            "NODE_RANK": str(index),
        }
        if nproc == 1:
            n = str(len(workers))
            env.update(
                {
                    "RANK": str(index),
                    "WORLD_SIZE": n,
                    "LOCAL_RANK": "0",
                    "LOCAL_WORLD_SIZE": "1",
                    "ROLE_RANK": str(index),
                    "ROLE_WORLD_SIZE": n,
                }
            )
        return env

    def wrap_command(
        self,
        command: Sequence[str],
        index: int,
        view: ClusterView,
        nproc: int,
        run_id: str,
        elastic: Elastic | None = None,
    ) -> list[str]:
        """The user's command, wrapped in ``torch.distributed.run`` when a container runs several processes.

        Static rendezvous on the rank-0 container's reserved port: container i's
        processes are ranks i*nproc .. i*nproc+nproc-1, one rank group per
        container. (Under c10d rendezvous torchrun ignores --node-rank and
        numbers the containers by host name and process id.)
        """
        if elastic:
            return self.elastic_command(command, nproc, run_id, elastic)
        if nproc == 1:
            return list(command)
        workers = list(view["worker"])
        master_addr, master_port = workers[0].rsplit(":", 1)
        launcher = [
            "python",
            "-m",
            "torch.distributed.run",
            f"--nnodes={len(workers)}",
            f"--nproc-per-node={nproc}",
            f"--node-rank={index}",
            "--rdzv-backend=static",
            f"--master-addr={master_addr}",
            f"--master-port={master_port}",
            f"--rdzv-id={run_id}",
        ]
        return _launch(launcher, command)

    def elastic_command(self, command: Sequence[str], nproc: int, run_id: str, elastic: Elastic) -> list[str]:
        """torchrun's elastic agent: --nnodes MIN:MAX, c10d rendezvous on the AM's store (never hosted here).

        Through appmaster.executor.elastic_agent, which reports each round's
        world size, unless the command runs in a Docker image (tfyarn may not be in it).
        """
        module = "appmaster.executor.elastic_agent" if elastic.report else "torch.distributed.run"
        launcher = [
            "python",
            "-m",
            module,
            f"--nnodes={elastic.min_nodes}:{elastic.max_nodes}",
            f"--nproc-per-node={nproc}",
            "--rdzv-backend=c10d",
            f"--rdzv-endpoint={elastic.endpoint}",
            f"--rdzv-id={run_id}",
            f"--rdzv-conf=is_host=false,last_call_timeout={LAST_CALL_S}",
            f"--max-restarts={elastic.max_restarts}",
            "--monitor-interval=1",
        ]
        if elastic.local_addr:
            launcher.append(f"--local-addr={elastic.local_addr}")
        return _launch(launcher, command)


# Elastic: once MIN nodes are in a round, how long torchrun waits for more (up to MAX) before starting it.
LAST_CALL_S = 10


def _launch(launcher: list[str], command: Sequence[str]) -> list[str]:
    """torchrun takes `script args` or `-m module args` after a python; anything else with --no-python."""
    if os.path.basename(command[0]).startswith("python"):
        return [*launcher, *command[1:]]
    return [*launcher, "--no-python", *command]


def rendezvous_endpoint(view: ClusterView) -> str:
    """The AM's c10d store in an elastic job's cluster view."""
    return next(iter(view.get(protocol.VIEW_RENDEZVOUS, ())), "")


PYTORCH = PyTorch()
