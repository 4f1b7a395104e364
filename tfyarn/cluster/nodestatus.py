"""Each node of a local cluster as `cluster status` shows it: its process, and what the RM says of it.

The process side (pid, own mount namespace) comes from the node's pid file
and /proc; the rest (state, resources total and used, containers) only
from the ResourceManager (rmnodes.py), so the status shows what YARN
schedules by, not what tfyarn meant to configure.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

from tfyarn.cluster import daemons
from tfyarn.cluster.layout import ClusterLayout
from tfyarn.cluster.nodes import has_own_mounts
from tfyarn.rmnodes import NodeCapacity


@dataclass
class NodeState:
    """One node: None for what is unknown (the RM does not answer, or does not know the node)."""

    node: int
    address: str
    nodemanager_pid: int | None
    private_tmp: bool | None  # whether its NodeManager runs with a /tmp of its own
    datanode_pid: int | None = None
    state: str | None = None  # as the RM sees it: RUNNING, LOST, SHUTDOWN, UNHEALTHY, ...
    memory_mb: int | None = None
    memory_used_mb: int | None = None
    vcores: int | None = None
    vcores_used: int | None = None
    gpus: int | None = None
    gpus_used: int | None = None
    containers: int | None = None
    labels: tuple[str, ...] = ()  # its YARN node labels, as the RM has them


def same_host(name: str, address: str) -> bool:
    """Whether the RM's name of a node (node 1 registers as ``localhost``: 127.0.0.1's name) is ``address``."""
    if name == address:
        return True
    try:
        return socket.gethostbyname(name) == address
    except OSError:
        return False


def _rm_record(host: str, rm_nodes: list[NodeCapacity]) -> NodeCapacity | None:
    """The RM's record of the node at ``host``; a RUNNING one first if it has several."""
    mine = [n for n in rm_nodes if same_host(n.host, host)]
    return next((n for n in mine if n.state == "RUNNING"), mine[0] if mine else None)


def node_state(layout: ClusterLayout, rm_nodes: list[NodeCapacity] | None) -> NodeState:
    first = layout.node == 1
    pid = daemons.running_pid(layout, daemons.NODEMANAGER if first else daemons.EXTRA_NODEMANAGER)
    dn_pid = daemons.running_pid(layout, daemons.DATANODE if first else daemons.EXTRA_DATANODE)
    st = NodeState(layout.node, layout.host, pid, has_own_mounts(pid) if pid else None, dn_pid)
    rec = _rm_record(layout.host, rm_nodes or [])
    if rec is not None:
        st.state = rec.state
        st.memory_mb, st.memory_used_mb = rec.memory_mb, rec.used_memory_mb
        st.vcores, st.vcores_used = rec.vcores, rec.used_vcores
        st.gpus, st.gpus_used, st.containers = rec.gpus, rec.used_gpus, rec.containers
        st.labels = rec.labels
    return st


def node_states(layout: ClusterLayout, count: int, rm_nodes: list[NodeCapacity] | None) -> list[NodeState]:
    """Nodes 1..``count``, and any node above it whose NodeManager still runs."""
    running_extra = [
        i for i in daemons.extra_nodes(layout) if daemons.running_pid(layout.for_node(i), daemons.EXTRA_NODEMANAGER)
    ]
    numbers = sorted({*range(1, count + 1), *running_extra})
    return [node_state(layout.for_node(i), rm_nodes) for i in numbers]


def describe(st: NodeState) -> str:
    """One line of `cluster status`."""
    proc = f"nodemanager pid {st.nodemanager_pid}" if st.nodemanager_pid else "nodemanager stopped"
    if st.node > 1 and st.nodemanager_pid:
        proc += ", private /tmp" if st.private_tmp else ", host's /tmp"
    proc += f", datanode pid {st.datanode_pid}" if st.datanode_pid else ", datanode stopped"
    if st.labels:
        proc += f"; label {','.join(st.labels)}"
    if st.state is None:
        return f"  node {st.node}  {st.address:<10} {proc}; no word of it from the ResourceManager"
    return (
        f"  node {st.node}  {st.address:<10} {st.state:<9} memory {st.memory_used_mb}/{st.memory_mb} MB, "
        f"vcores {st.vcores_used}/{st.vcores}, GPUs {st.gpus_used}/{st.gpus}, "
        f"{st.containers} container(s); {proc}"
    )
