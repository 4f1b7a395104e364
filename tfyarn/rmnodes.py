"""The ResourceManager's nodes (its /ws/v1/cluster/nodes REST answer), asked for and read here only.

The callers: the client's admission check (does a container fit the largest
node), `tfyarn cluster status` (each node: state, resources total and used,
containers), `tfyarn nodes` (the same of any cluster, with health and tfyarn's
tasks) and the AM's allocation-timeout message (what is free). Both
sides import it, so it uses the stdlib only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tfyarn.nodegpus import resource_gpus
from tfyarn.rest import FetchError, Unreadable, get, parse_json

__all__ = [
    "NODES_PATH",
    "RUNNING_NODES_PATH",
    "FetchError",
    "NodeCapacity",
    "Unreadable",
    "fetch_nodes",
    "get_nodes",
    "parse_nodes",
]

NODES_PATH = "/ws/v1/cluster/nodes"
RUNNING_NODES_PATH = f"{NODES_PATH}?states=RUNNING"  # only nodes that take containers


@dataclass(frozen=True)
class NodeCapacity:
    """One node: what it offers in all, and what is free of it now."""

    node_id: str
    memory_mb: int
    vcores: int
    gpus: int
    state: str = "RUNNING"
    free_memory_mb: int = 0
    free_vcores: int = 0
    free_gpus: int = 0
    used_memory_mb: int = 0
    used_vcores: int = 0
    used_gpus: int = 0
    containers: int = 0  # running on the node now
    health_report: str = ""  # the NodeManager's health checker's complaint ("" while healthy)
    last_health_update_ms: int = 0  # when the RM last heard of the node's health (ms since the epoch)
    http_address: str = ""  # its NodeManager's web address, host:port
    labels: tuple[str, ...] = ()  # its YARN node labels (a node has at most one today)

    @property
    def host(self) -> str:
        """The node's address: its id is ``host:port`` of its NodeManager."""
        return self.node_id.rpartition(":")[0] or self.node_id

    @classmethod
    def from_rm(cls, node: dict[str, Any]) -> NodeCapacity:
        total = node.get("totalResource") or {}
        return cls(
            str(node.get("id", "?")),
            int(total.get("memory", 0)),
            int(total.get("vCores", 0)),
            resource_gpus(total),
            str(node.get("state") or ""),
            int(node.get("availMemoryMB", 0)),
            int(node.get("availableVirtualCores", 0)),
            resource_gpus(node.get("availableResource")),
            int(node.get("usedMemoryMB", 0)),
            int(node.get("usedVirtualCores", 0)),
            resource_gpus(node.get("usedResource")),
            int(node.get("numContainers", 0)),
            health_report=str(node.get("healthReport") or ""),
            last_health_update_ms=int(node.get("lastHealthUpdate") or 0),
            http_address=str(node.get("nodeHTTPAddress") or ""),
            labels=tuple(str(label) for label in node.get("nodeLabels") or ()),
        )


def parse_nodes(raw: bytes) -> list[NodeCapacity]:
    """The RM's nodes answer ({"nodes": null} when there are none); Unreadable saying why otherwise."""
    doc = parse_json(raw)
    if not isinstance(doc, dict) or "nodes" not in doc:
        raise Unreadable('JSON without "nodes"')
    try:
        return [NodeCapacity.from_rm(n) for n in ((doc["nodes"] or {}).get("node") or [])]
    except (AttributeError, TypeError, ValueError) as e:
        raise Unreadable(f"unexpected node record ({e})") from None


def get_nodes(rm_web: str, timeout: float = 5.0, all_states: bool = False) -> list[NodeCapacity]:
    """The RUNNING nodes (``all_states``: every node it knows, LOST and SHUTDOWN ones too) of the RM at
    ``rm_web`` (http://host:port); FetchError or Unreadable saying why not."""
    path = NODES_PATH if all_states else RUNNING_NODES_PATH
    return parse_nodes(get(f"{rm_web.rstrip('/')}{path}", timeout=timeout))


def fetch_nodes(rm_web: str, timeout: float = 5.0, all_states: bool = False) -> list[NodeCapacity] | None:
    """``get_nodes``, or None while the RM does not answer (yet) or answers what cannot be read."""
    try:
        return get_nodes(rm_web, timeout, all_states)
    except (FetchError, Unreadable):
        return None
