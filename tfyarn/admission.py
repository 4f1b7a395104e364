"""Refuse at submit time what the cluster could never run.

Pure checks of a spec against the scheduler's limits (the ResourceManager's
effective configuration, its /conf page) and the nodes' capacities (its
REST API), both read by the client: a container larger than the scheduler's
maximum, a resource type the cluster does not define, or more GPUs, memory
or vcores than any node has fails in a second with the limit named,
instead of waiting for an allocation that never comes. A job for a queue
that does not exist, is stopped, or is a parent is refused naming the queues
that take jobs (the scheduler's REST API), instead of being failed by YARN.

The ``parse_*`` functions read the RM's answers as it really sends them
(JSON, since tfyarn asks for it; /conf also as XML) and raise ``Unreadable``
when they cannot, so the caller can say the check did not run. The nodes'
answer is read by tfyarn.rmnodes, which the AM shares.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

from tfyarn.errors import SpecError
from tfyarn.nodegpus import GPU
from tfyarn.rest import Unreadable, parse_json
from tfyarn.rmnodes import NodeCapacity, parse_nodes
from tfyarn.spec import JobSpec

__all__ = [
    "NodeCapacity",
    "Queue",
    "SchedulerLimits",
    "Unreadable",
    "check_fits",
    "check_labels",
    "check_limits",
    "check_queue",
    "check_queue_labels",
    "parse_conf",
    "parse_nodes",
    "parse_queues",
]

MAX_MB = "yarn.scheduler.maximum-allocation-mb"


def parse_conf(raw: bytes) -> dict[str, str]:
    """The RM's /conf page as properties: JSON ({"properties": [{"key", "value"}]}) or Hadoop's XML."""
    if raw.lstrip().startswith(b"{"):
        doc = parse_json(raw)
        items = doc.get("properties") if isinstance(doc, dict) else None
        if not isinstance(items, list):
            raise Unreadable('JSON without a "properties" list')
        props = {str(p["key"]): str(p.get("value", "")) for p in items if isinstance(p, dict) and "key" in p}
    else:
        try:
            root = ET.fromstring(raw)
        except ET.ParseError as e:
            raise Unreadable(f"neither JSON nor XML ({e})") from None
        props = {p.findtext("name") or "": p.findtext("value") or "" for p in root.iter("property")}
    if MAX_MB not in props:
        raise Unreadable(f"no {MAX_MB} in it")
    return props


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
        return cls(num(MAX_MB), num("yarn.scheduler.maximum-allocation-vcores"), types)


def check_limits(spec: JobSpec, limits: SchedulerLimits, am_memory_mb: int) -> None:
    """Raise SpecError for a container the scheduler would refuse or never place."""
    for name, role in spec.roles.items():
        if role.instances and role.gpus and GPU not in limits.resource_types:
            raise SpecError(
                f"roles.{name}.gpus: this cluster defines no {GPU} resource (yarn.resource-types is "
                f"{','.join(sorted(limits.resource_types)) or 'empty'}); ask for 0 GPUs or use a GPU "
                "cluster"
            )
    asks = [(f"roles.{n}", n, r.memory_mb, r.vcores) for n, r in spec.roles.items() if r.instances]
    asks.append(("am_memory_mb", "ApplicationMaster", am_memory_mb, 1))
    for where, who, memory, vcores in asks:
        if limits.max_memory_mb is not None and memory > limits.max_memory_mb:
            key = "am_memory_mb" if where == "am_memory_mb" else f"{where}.memory_mb"
            raise SpecError(
                f"{key}: each {who} container asks {memory} MiB, above the scheduler's maximum "
                f"container size of {limits.max_memory_mb} MiB (yarn.scheduler.maximum-allocation-mb)"
            )
        if limits.max_vcores is not None and vcores > limits.max_vcores:
            raise SpecError(
                f"{where}.vcores: each {who} container asks {vcores} vcores, above the scheduler's "
                f"maximum of {limits.max_vcores} (yarn.scheduler.maximum-allocation-vcores)"
            )


def check_labels(spec: JobSpec, nodes: list[NodeCapacity]) -> None:
    """Raise SpecError for a node label that no RUNNING node carries, naming the labels nodes do carry."""
    carried = sorted({label for n in nodes for label in n.labels})
    for label in spec.labels:
        if not any(label in n.labels for n in nodes):
            have = f"its nodes carry {', '.join(carried)}" if carried else "no node of it carries a label"
            raise SpecError(
                f"node_label: no RUNNING node of the cluster carries label {label!r} ({have}); "
                "use one of those, or none"
            )


def check_fits(spec: JobSpec, nodes: list[NodeCapacity]) -> None:
    """Raise SpecError naming the first role whose container fits on no node (with its label, if asked)."""
    if not nodes:
        raise SpecError("cluster: no RUNNING NodeManager; start one (`tfyarn cluster up`) or check the cluster")
    check_labels(spec, nodes)
    for name, role in spec.roles.items():
        if not role.instances:
            continue
        label = spec.label_of(name)
        mine = [n for n in nodes if label in n.labels] if label else nodes
        where = f"node with label {label!r}" if label else "node"
        for key, asked, have, unit in (
            ("gpus", role.gpus, max(n.gpus for n in mine), f"GPU(s) ({GPU})"),
            ("memory_mb", role.memory_mb, max(n.memory_mb for n in mine), "MiB of memory"),
            ("vcores", role.vcores, max(n.vcores for n in mine), "vcore(s)"),
        ):
            if asked > have:
                raise SpecError(
                    f"roles.{name}.{key}: each {name} container asks {asked} {unit}, but the "
                    f"largest {where} offers {have}; ask for at most {have}"
                )


@dataclass(frozen=True)
class Queue:
    path: str  # root.parent.leaf
    leaf: bool
    state: str  # RUNNING, STOPPED, DRAINING
    auto_create: bool  # a parent that creates the child queue a job names
    labels: tuple[str, ...] = ("*",)  # the node labels it may use (* for any; () none)

    def named(self, name: str) -> bool:
        """Whether ``name`` (a full path or a leaf's short name, as YARN accepts) means this queue."""
        return name in (self.path, self.path.rsplit(".", 1)[-1])


def parse_queues(raw: bytes) -> list[Queue] | None:
    """The capacity scheduler's queues from /ws/v1/cluster/scheduler; None for a scheduler that
    takes any queue name (the fair scheduler creates undeclared queues by default; FIFO has one)."""
    doc = parse_json(raw)
    try:
        info = doc["scheduler"]["schedulerInfo"]
        if info.get("type") != "capacityScheduler":
            return None
        return list(_walk(info))
    except (KeyError, TypeError, AttributeError) as e:
        raise Unreadable(f"unexpected scheduler record (no {e})") from None


def _walk(q: dict[str, Any]) -> Any:
    children = (q.get("queues") or {}).get("queue") or []
    auto = q.get("autoCreateChildQueueEnabled") is True or q.get("autoCreationEligibility", "off") != "off"
    leaf = str(q["type"]).endswith("LeafQueueInfo") if "type" in q else "queues" not in q
    labels = tuple(str(label) for label in q.get("nodeLabels") or ())  # the RM leaves it out for none
    yield Queue(q.get("queuePath") or q["queueName"], leaf, q.get("state") or "RUNNING", auto, labels)
    for child in children:
        yield from _walk(child)


def check_queue_labels(spec: JobSpec, queues: list[Queue]) -> None:
    """Raise SpecError for a node label the job's queue may not use (YARN would fail the job)."""
    match = [q for q in queues if q.named(spec.queue) and q.leaf]
    if not match or "*" in match[0].labels:
        return
    for label in spec.labels:
        if label not in match[0].labels:
            may = ", ".join(q for q in match[0].labels if q) or "none"
            raise SpecError(
                f"node_label: queue {spec.queue} may not use node label {label!r} (its labels: {may}); "
                "ask the cluster's admin, or use another queue"
            )


def check_queue(name: str, queues: list[Queue]) -> None:
    """Raise SpecError unless YARN would accept a job for queue ``name``."""
    open_ = sorted(q.path.rsplit(".", 1)[-1] for q in queues if q.leaf and q.state == "RUNNING")
    hint = f"use one of the queues that take jobs: {', '.join(open_) or 'none'}"
    match = [q for q in queues if q.named(name)]
    if match and match[0].leaf:
        if match[0].state != "RUNNING":
            raise SpecError(f"queue: queue {name} is {match[0].state} and takes no new jobs; {hint}")
        return
    if match:
        raise SpecError(f"queue: {name} is a parent queue, which takes no jobs; {hint}")
    parents = name.split(".")
    if any(q.auto_create and q.path == ".".join(parents[:i]) for q in queues for i in range(1, len(parents))):
        return  # a parent that creates it on submit
    raise SpecError(f"queue: this cluster has no queue {name!r}; {hint}")
