"""Per-framework environments: pure functions of (task, cluster view).

The executor calls these once the AM has published the cluster view; they
only build environment variables and argv, so they are unit-tested without
a cluster and without importing TensorFlow or torch.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

from tfyarn import protocol

# role -> addresses ("host:port") of its tasks, by index
ClusterView = Mapping[str, Sequence[str]]


def tensorflow_env(role: str, index: int, view: ClusterView) -> dict[str, str]:
    """TF_CONFIG. The evaluator is left out of ``cluster``: TF2's
    ParameterServerStrategy rejects a cluster that lists it."""
    cluster = {r: list(addrs) for r, addrs in view.items() if r != "evaluator" and addrs}
    return {"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": role, "index": index}})}


def pytorch_env(index: int, view: ClusterView, nproc: int) -> dict[str, str]:
    """The variables torchrun would set, so a torchrun script runs unchanged.

    With several processes per container torchrun itself sets the per-process
    ranks; only the node-level variables are given here.
    """
    workers = list(view["worker"])
    master_addr, master_port = workers[0].rsplit(":", 1)
    env = {"MASTER_ADDR": master_addr, "MASTER_PORT": master_port,
           "GROUP_RANK": str(index), "NODE_RANK": str(index)}
    if nproc == 1:
        n = str(len(workers))
        env.update({"RANK": str(index), "WORLD_SIZE": n, "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
                    "ROLE_RANK": str(index), "ROLE_WORLD_SIZE": n})
    return env


def pytorch_command(command: Sequence[str], index: int, view: ClusterView, nproc: int,
                    run_id: str) -> list[str]:
    """The user's command, wrapped in ``torch.distributed.run`` when a container runs several processes.

    The c10d rendezvous lives on the rank-0 container's reserved port.
    """
    if nproc == 1:
        return list(command)
    workers = list(view["worker"])
    launcher = ["python", "-m", "torch.distributed.run", f"--nnodes={len(workers)}",
                f"--nproc-per-node={nproc}", f"--node-rank={index}", "--rdzv-backend=c10d",
                f"--rdzv-endpoint={workers[0]}", f"--rdzv-id={run_id}"]
    if os.path.basename(command[0]).startswith("python"):
        return [*launcher, *command[1:]]  # torchrun takes `script args` or `-m module args`
    return [*launcher, "--no-python", *command]


def thread_env(environ: Mapping[str, str], nproc: int) -> dict[str, str]:
    """OMP_NUM_THREADS from the container's vcores, split among its processes, as torchrun does.

    Without it every process sizes its thread pools to the whole node and
    the containers of a node oversubscribe its cores. A value the user set
    (``--env OMP_NUM_THREADS=N``) is kept.
    """
    if protocol.ENV_OMP_THREADS in environ:
        return {}
    try:
        vcores = int(environ.get(protocol.ENV_SKEIN_VCORES, ""))
    except ValueError:
        return {}
    return {protocol.ENV_OMP_THREADS: str(max(1, vcores // max(1, nproc)))}


def framework_env(framework: str, role: str, index: int, view: ClusterView, nproc: int) -> dict[str, str]:
    if framework == "tensorflow":
        return tensorflow_env(role, index, view)
    if framework == "pytorch":
        return pytorch_env(index, view, nproc)
    return {}
