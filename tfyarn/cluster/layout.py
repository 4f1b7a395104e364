"""Where a local cluster keeps its files and which loopback ports it uses.

Everything about the local cluster's shape lives here so that the config
writer, the daemon runner and the CLI agree without passing paths around.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tfyarn import protocol

HADOOP_VERSION = "3.5.0"
HOST = "127.0.0.1"
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
    datanode_data: int = 9866
    datanode_http: int = 9864
    datanode_ipc: int = 9867
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

    @property
    def conf_dir(self) -> Path:
        return self.root / "conf"

    @property
    def bin_dir(self) -> Path:
        return self.root / "bin"

    @property
    def log_dir(self) -> Path:
        return self.root / "logs"

    @property
    def pid_dir(self) -> Path:
        return self.root / "pids"

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

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
    def nn_web(self) -> str:
        return f"http://{HOST}:{self.ports.namenode_http}"

    @property
    def nm_web(self) -> str:
        return f"http://{HOST}:{self.ports.nm_http}"
