"""Which node each task's container asks for: YARN's choice, spread over nodes, or packed onto few.

skein asks for all of a service's containers with one fixed node list, so
tfyarn names a node per request through services of its own: the service
``<role>@<host>`` asks strictly for that host (locality not relaxed). The
plan declares one per role and allowed node; the AM picks which to ask
from, for the gang's first containers (``assign``) and for each restart
(``choose``, away from nodes where a container of the job was lost). Pure:
the nodes come in, as the ResourceManager listed them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from tfyarn.rmnodes import NodeCapacity
from tfyarn.spec import PLACEMENTS, JobSpec, RoleSpec

YARN, SPREAD, PACK = PLACEMENTS
_SEP = "@"


def node_service(role: str, host: str) -> str:
    """The skein service whose containers run ``role``'s tasks on ``host`` only."""
    return f"{role}{_SEP}{host}"


def role_of_service(service: str) -> str:
    """``worker@127.0.0.2`` -> ``worker``; a role's own service is its name."""
    return service.partition(_SEP)[0]


def fits(node: NodeCapacity, role: RoleSpec) -> bool:
    """Whether one container of ``role``'s size fits what ``node`` has free."""
    return node.free_memory_mb >= role.memory_mb and node.free_vcores >= role.vcores and node.free_gpus >= role.gpus


def _take(node: NodeCapacity, role: RoleSpec) -> NodeCapacity:
    """``node`` with one more ``role`` container's resources in use."""
    from dataclasses import replace

    return replace(
        node,
        free_memory_mb=node.free_memory_mb - role.memory_mb,
        free_vcores=node.free_vcores - role.vcores,
        free_gpus=node.free_gpus - role.gpus,
    )


def usable(nodes: Iterable[NodeCapacity], hosts: Sequence[str]) -> list[NodeCapacity]:
    """The RUNNING nodes among ``hosts`` (the job's allowed nodes), in ``hosts``' order."""
    by_host = {n.host: n for n in nodes if n.state == "RUNNING"}
    return [by_host[h] for h in hosts if h in by_host]


def _pick(
    candidates: Sequence[NodeCapacity], role: RoleSpec, mode: str, counts: Mapping[str, int], home: str
) -> NodeCapacity | None:
    """The node for one more ``role`` task, or None when none fits.

    spread: the fewest tasks of this role; pack: the most tasks of the job.
    Ties go to ``home`` (the AM's node: the job already depends on it), then
    to the node with the most free memory.
    """
    room = [n for n in candidates if fits(n, role)]
    if not room:
        return None
    sign = -1 if mode == PACK else 1
    return min(room, key=lambda n: (sign * counts.get(n.host, 0), n.host != home, -n.free_memory_mb))


def assign(
    spec: JobSpec, nodes: Sequence[NodeCapacity], hosts: Sequence[str], mode: str, home: str = ""
) -> dict[tuple[str, int], str]:
    """(role, index) -> host for the gang's first containers ("" = any allowed node, YARN's choice).

    spread puts a role's tasks on distinct nodes as far as they go (one
    DDP rank group per node); pack fills as few nodes as it can. Each role
    starts from ``home``, so a lost node takes as few of each role as it
    can, and the tasks a job cannot lose share the AM's fate.
    """
    free = {n.host: n for n in usable(nodes, hosts)}
    placed: dict[tuple[str, int], str] = {}
    job_counts: dict[str, int] = {}
    for role in spec.roles.values():
        role_counts: dict[str, int] = {}
        for index in range(role.instances):
            counts = role_counts if mode == SPREAD else job_counts
            node = _pick(list(free.values()), role, mode, counts, home) if mode != YARN else None
            if node is None:
                placed[(role.name, index)] = ""
                continue
            placed[(role.name, index)] = node.host
            free[node.host] = _take(node, role)
            role_counts[node.host] = role_counts.get(node.host, 0) + 1
            job_counts[node.host] = job_counts.get(node.host, 0) + 1
    return placed


def choose(
    role: RoleSpec,
    nodes: Sequence[NodeCapacity] | None,
    hosts: Sequence[str],
    mode: str,
    avoid: Iterable[str],
    counts: Mapping[str, int],
    home: str = "",
    prefer: str = "",
) -> str:
    """The host for a restarted ``role`` task: a RUNNING allowed node not in ``avoid`` with room.

    ``prefer`` (where the task ran) wins while it qualifies: there the task
    gets its old port back, and peers that know its address find it again.
    ``counts``: the job's live tasks per host (of this role, for spread).
    "" when the nodes are unknown or none qualifies: the role's own service
    then asks for any allowed node, and YARN decides.
    """
    if nodes is None or not hosts:
        return ""
    bad = set(avoid)
    candidates = [n for n in usable(nodes, hosts) if n.host not in bad]
    if any(n.host == prefer and fits(n, role) for n in candidates):
        return prefer
    if mode == YARN:  # no preference of the job's: the freest node
        room = [n for n in candidates if fits(n, role)]
        return max(room, key=lambda n: n.free_memory_mb).host if room else ""
    node = _pick(candidates, role, mode, counts, home)
    return node.host if node else ""
