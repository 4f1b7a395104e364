"""Refuse at submit time what the cluster could never run.

Pure checks of a spec against the scheduler's limits (the ResourceManager's
effective configuration, its /conf page) and the nodes' capacities (its
REST API), both read by the client: a container larger than the scheduler's
maximum, a resource type the cluster does not define, or more GPUs, memory
or vcores than any node has fails in a second with the limit named,
instead of waiting for an allocation that never comes.
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


@dataclass(frozen=True)
class SchedulerLimits:
    max_memory_mb: int | None
    max_vcores: int | None
    resource_types: frozenset[str]

    @classmethod
    def from_conf(cls, props: dict[str, str]) -> SchedulerLimits:
        def num(key: str) -> int | None:
            value = props.get(key, "").strip()
            return int(value) if value.isdigit() else None

        types = frozenset(t.strip() for t in props.get("yarn.resource-types", "").split(",") if t.strip())
        return cls(num("yarn.scheduler.maximum-allocation-mb"), num("yarn.scheduler.maximum-allocation-vcores"),
                   types)


def check_limits(spec: JobSpec, limits: SchedulerLimits, am_memory_mb: int) -> None:
    """Raise SpecError for a container the scheduler would refuse or never place."""
    for name, role in spec.roles.items():
        if role.instances and role.gpus and GPU not in limits.resource_types:
            raise SpecError(f"roles.{name}.gpus: this cluster defines no {GPU} resource (yarn.resource-types is "
                            f"{','.join(sorted(limits.resource_types)) or 'empty'}); ask for 0 GPUs or use a GPU "
                            "cluster")
    asks = [(f"roles.{n}", n, r.memory_mb, r.vcores) for n, r in spec.roles.items() if r.instances]
    asks.append(("am_memory_mb", "ApplicationMaster", am_memory_mb, 1))
    for where, who, memory, vcores in asks:
        if limits.max_memory_mb is not None and memory > limits.max_memory_mb:
            key = "am_memory_mb" if where == "am_memory_mb" else f"{where}.memory_mb"
            raise SpecError(f"{key}: each {who} container asks {memory} MiB, above the scheduler's maximum "
                            f"container size of {limits.max_memory_mb} MiB (yarn.scheduler.maximum-allocation-mb)")
        if limits.max_vcores is not None and vcores > limits.max_vcores:
            raise SpecError(f"{where}.vcores: each {who} container asks {vcores} vcores, above the scheduler's "
                            f"maximum of {limits.max_vcores} (yarn.scheduler.maximum-allocation-vcores)")


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
