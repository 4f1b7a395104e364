"""Refuse at submit time what no node of the cluster could ever run.

A pure check of a spec against the nodes' capacities (read from the
ResourceManager's REST API by the client), so a container that asks for
more GPUs, memory or vcores than any node has fails in a second with the
limit named, instead of waiting forever for an allocation.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tfyarn.errors import SpecError
from tfyarn.spec import JobSpec

GPU = "yarn.io/gpu"


@dataclass(frozen=True)
class NodeCapacity:
    node_id: str
    memory_mb: int
    vcores: int
    gpus: int

    @classmethod
    def from_rm(cls, node: dict[str, Any]) -> NodeCapacity:
        total = node.get("totalResource") or {}
        infos = ((total.get("resourceInformations") or {}).get("resourceInformation")) or []
        gpus = sum(int(i.get("value", 0)) for i in infos if i.get("name") == GPU)
        return cls(node.get("id", "?"), int(total.get("memory", 0)), int(total.get("vCores", 0)), gpus)


def check_fits(spec: JobSpec, nodes: list[NodeCapacity]) -> None:
    """Raise SpecError naming the first role whose container fits on no node."""
    if not nodes:
        raise SpecError("cluster: no RUNNING NodeManager; start one (`tfyarn cluster up`) or check the cluster")
    for name, role in spec.roles.items():
        if not role.instances:
            continue
        for key, asked, have, unit in (
            ("gpus", role.gpus, max(n.gpus for n in nodes), f"GPU(s) ({GPU})"),
            ("memory_mb", role.memory_mb, max(n.memory_mb for n in nodes), "MiB of memory"),
            ("vcores", role.vcores, max(n.vcores for n in nodes), "vcore(s)"),
        ):
            if asked > have:
                raise SpecError(f"roles.{name}.{key}: each {name} container asks {asked} {unit}, but the "
                                f"largest node offers {have}; ask for at most {have}")
