"""Why a gang does not fit: what each node has free, and how many missing containers one node can hold.

A container cannot span nodes, so a cluster can have enough free in total
and still never place a gang (2 workers x 3 GPUs fit on two 4-GPU nodes;
3 x 3 do not). The allocation timeout's message says which it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tfyarn.rmnodes import NodeCapacity
from tfyarn.spec import RoleSpec


def holds(node: NodeCapacity, role: RoleSpec) -> int:
    """How many containers of ``role``'s size fit in what ``node`` has free."""
    counts = [node.free_memory_mb // max(1, role.memory_mb), node.free_vcores // max(1, role.vcores)]
    if role.gpus:
        counts.append(node.free_gpus // role.gpus)
    return max(0, min(counts))


def _node(n: NodeCapacity) -> str:
    return f"{n.node_id} {n.free_memory_mb} MiB, {n.free_vcores} vcore(s), {n.free_gpus} GPU(s)"


def explain(nodes: Sequence[NodeCapacity], missing: Mapping[str, tuple[int, RoleSpec]]) -> str:
    """The cluster's free resources in words, per node, and whether the missing containers fit.

    ``missing``: role -> (containers not allocated, its spec). Roles are
    counted one after the other on the same free resources, largest first.
    """
    if not nodes:
        return ""
    mem = sum(n.free_memory_mb for n in nodes)
    cores = sum(n.free_vcores for n in nodes)
    free_gpus = sum(n.free_gpus for n in nodes)
    total_gpus = sum(n.gpus for n in nodes)
    words = (
        f"the cluster's {len(nodes)} node(s) have {mem} MiB, {cores} vcore(s) and "
        f"{free_gpus} of {total_gpus} GPU(s) free"
    )
    if len(nodes) > 1:
        words += " (per node: " + "; ".join(_node(n) for n in nodes) + ")"
    for role, (count, spec) in missing.items():
        fit = sum(holds(n, spec) for n in nodes)
        if fit >= count:
            continue  # it fits now: YARN had other work, or freed room since
        need = f"{count} x ({spec.memory_mb} MiB, {spec.vcores} vcore(s), {spec.gpus} GPU(s))"
        enough_in_total = (
            mem >= count * spec.memory_mb and cores >= count * spec.vcores and free_gpus >= count * spec.gpus
        )
        why = (
            "enough is free in total, but a container cannot span nodes"
            if enough_in_total
            else "the cluster has too little free"
        )
        words += f"; {role} needs {need} on single nodes and {min(fit, count)} fit: {why}"
    return words
