"""Where a local cluster keeps its files and which loopback ports it uses.

Everything about the local cluster's shape lives here so that the config
writer, the daemon runner and the CLI agree without passing paths around.
A layout is the view of one node: node 1 (the master daemons and the first
NodeManager, on 127.0.0.1) keeps the paths a single-node cluster always had;
node i > 1 is "host" 127.0.0.i with its own conf, data, log and pid dirs
under ``<root>/nodes/<i>/``, reusing the same port numbers on its address.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from tfyarn import protocol

HADOOP_VERSION = "3.5.0"
HOST = "127.0.0.1"  # the master daemons' address, and node 1's
MAX_NODES = 8
# Node i's DataNode listens 100*(i-1) ports above node 1's: the NameNode keys DataNodes by the
# address their RPCs come from (127.0.0.1 for every node here) and their data port, so equal
# ports on 127.0.0.i would make each new DataNode evict the last from the NameNode's map.
DATANODE_PORT_STEP = 100
DEFAULT_CLUSTER_DIR = "~/.tfyarn/cluster"


def default_cluster_dir() -> Path:
    """``$TFYARN_CLUSTER_DIR`` or ``~/.tfyarn/cluster``."""
    return Path(os.environ.get(protocol.ENV_CLUSTER_DIR) or DEFAULT_CLUSTER_DIR).expanduser()


def default_jar_cache() -> Path:
    """``$TFYARN_JAR_CACHE`` or ``~/.cache/tfyarn/hadoop-<version>``: survives ``cluster down``."""
    env = os.environ.get(protocol.ENV_JAR_CACHE)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "tfyarn" / f"hadoop-{HADOOP_VERSION}"


@dataclass(frozen=True)
class Ports:
    """Loopback ports of the four daemons (Hadoop's defaults where it has fixed ones)."""

    namenode_rpc: int = 9000
    namenode_http: int = 9870
    namenode_https: int = 9871  # a Kerberized cluster's NameNode web (HTTPS only)
    datanode_data: int = 9866
    datanode_http: int = 9864
    datanode_ipc: int = 9867
    datanode_https: int = 9865  # a Kerberized cluster's DataNode web (HTTPS only)
    rm_rpc: int = 8032
    rm_scheduler: int = 8030
    rm_tracker: int = 8031
    rm_admin: int = 8033
    rm_http: int = 8088
    nm_rpc: int = 8041
    nm_localizer: int = 8040
    nm_http: int = 8042


@dataclass(frozen=True)
class ClusterLayout:
    """Paths of one local cluster, all under ``root`` except the shared jar cache."""

    root: Path = field(default_factory=default_cluster_dir)
    jar_cache: Path = field(default_factory=default_jar_cache)
    ports: Ports = field(default_factory=Ports)
    node: int = 1  # which node's view: 1 is the master node, 2.. the extra NodeManagers

    def for_node(self, node: int) -> ClusterLayout:
        """The same cluster seen from node ``node`` (1..MAX_NODES)."""
        if not 1 <= node <= MAX_NODES:
            raise ValueError(f"node {node} is not in 1..{MAX_NODES}")
        return replace(self, node=node)

    @property
    def node_ports(self) -> Ports:
        """This node's ports: the shared ones, with its DataNode's moved up (DATANODE_PORT_STEP)."""
        step = DATANODE_PORT_STEP * (self.node - 1)
        p = self.ports
        return replace(
            p,
            datanode_data=p.datanode_data + step,
            datanode_http=p.datanode_http + step,
            datanode_ipc=p.datanode_ipc + step,
            datanode_https=p.datanode_https + step,
        )

    @property
    def host(self) -> str:
        """This node's own loopback address: any 127.x.y.z binds without set-up."""
        return f"127.0.0.{self.node}"

    @property
    def nodes_dir(self) -> Path:
        """Holds ``<i>/`` per extra node and ``count``, the node count the cluster was last asked for."""
        return self.root / "nodes"

    @property
    def node_dir(self) -> Path:
        """The root of this node's own dirs: the cluster root for node 1, ``nodes/<i>`` otherwise."""
        return self.root if self.node == 1 else self.nodes_dir / str(self.node)

    @property
    def conf_dir(self) -> Path:
        return self.node_dir / "conf"

    @property
    def bin_dir(self) -> Path:
        return self.root / "bin"

    @property
    def log_dir(self) -> Path:
        return self.node_dir / "logs"

    @property
    def pid_dir(self) -> Path:
        return self.node_dir / "pids"

    @property
    def data_dir(self) -> Path:
        return self.node_dir / "data"

    @property
    def gpu_dir(self) -> Path:
        """Holds this node's stand-in ``nvidia-smi``."""
        return self.node_dir / "gpu-discovery"

    @property
    def private_tmp(self) -> Path:
        """What an extra node's NodeManager and its containers see as /tmp."""
        return self.node_dir / "tmp"

    @property
    def nm_local_dir(self) -> Path:
        """The NodeManager's local dir: containers run in dirs under it."""
        return self.data_dir / "nm-local"

    @property
    def lib_dir(self) -> Path:
        return self.jar_cache / "lib"

    @property
    def webroot(self) -> Path:
        """Holds ``webapps/``: the HDFS web UIs, unpacked from a tests jar."""
        return self.jar_cache / "webroot"

    @property
    def classpath(self) -> str:
        return f"{self.conf_dir}:{self.webroot}:{self.lib_dir}/*"

    @property
    def fs_uri(self) -> str:
        return f"hdfs://{HOST}:{self.ports.namenode_rpc}"

    @property
    def rm_address(self) -> str:
        return f"{HOST}:{self.ports.rm_rpc}"

    @property
    def rm_web(self) -> str:
        return f"http://{HOST}:{self.ports.rm_http}"

    @property
    def kerberized(self) -> bool:
        """Whether the cluster was set up with Kerberos (`cluster up --kerberos`: its KDC database exists)."""
        return (self.root / "kerberos" / "db" / "principal").exists()

    @property
    def nn_web(self) -> str:
        """The NameNode's web address: HTTPS only on a Kerberized cluster (SASL data transfer needs it)."""
        if self.kerberized:
            return f"https://{HOST}:{self.ports.namenode_https}"
        return f"http://{HOST}:{self.ports.namenode_http}"

    @property
    def nm_web(self) -> str:
        return f"http://{self.host}:{self.ports.nm_http}"
