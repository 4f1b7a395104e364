"""Find the Hadoop cluster a client talks to, and check it answers, fast.

skein needs ``HADOOP_CONF_DIR`` and a ``yarn`` command on PATH. When the
user set neither, a local cluster started by ``tfyarn cluster up`` is used.
An unreachable ResourceManager is reported in seconds, before skein's Java
driver would retry for minutes.
"""
from __future__ import annotations

import os
import shutil
import socket
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from tfyarn import protocol
from tfyarn.cluster.layout import ClusterLayout
from tfyarn.errors import UnreachableError

_HOW = ("start the local cluster with `tfyarn cluster up`, or point HADOOP_CONF_DIR at a "
        "running cluster's configuration (with its `yarn` command on PATH)")


@dataclass(frozen=True)
class HadoopEnv:
    conf_dir: Path
    path: str  # PATH with a `yarn` on it

    def apply(self) -> None:
        """Export the settings for skein (which reads them from os.environ)."""
        os.environ[protocol.ENV_HADOOP_CONF_DIR] = str(self.conf_dir)
        os.environ["PATH"] = self.path


def read_conf(conf_dir: Path, filename: str) -> dict[str, str]:
    """The properties of one Hadoop XML file (missing file: empty)."""
    path = conf_dir / filename
    if not path.exists():
        return {}
    props = {}
    for prop in ET.parse(path).getroot().iter("property"):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name is not None:
            props[name.strip()] = (value or "").strip()
    return props


def discover() -> HadoopEnv:
    """HADOOP_CONF_DIR (or the local cluster's) and a PATH that has ``yarn``."""
    env_dir = os.environ.get(protocol.ENV_HADOOP_CONF_DIR)
    layout = ClusterLayout()
    path = os.environ.get("PATH", "")
    if env_dir:
        conf_dir = Path(env_dir)
        if not conf_dir.is_dir():
            raise UnreachableError(f"HADOOP_CONF_DIR={env_dir} is not a directory; {_HOW}")
    elif (layout.conf_dir / "yarn-site.xml").exists():
        conf_dir = layout.conf_dir
    else:
        raise UnreachableError(f"no Hadoop cluster configured (HADOOP_CONF_DIR is unset); {_HOW}")
    if not shutil.which("yarn", path=path) and (layout.bin_dir / "yarn").exists():
        path = f"{layout.bin_dir}:{path}"
    if not shutil.which("yarn", path=path):
        raise UnreachableError(f"no `yarn` command on PATH (skein needs it); {_HOW}")
    return HadoopEnv(conf_dir=conf_dir, path=path)


def rm_address(conf_dir: Path) -> tuple[str, int]:
    props = read_conf(conf_dir, "yarn-site.xml")
    addr = props.get("yarn.resourcemanager.address")
    if not addr:
        addr = f"{props.get('yarn.resourcemanager.hostname', '0.0.0.0')}:8032"
    host, _, port = addr.rpartition(":")
    return host, int(port)


def rm_web(conf_dir: Path) -> str:
    """The ResourceManager's web/REST base URL."""
    props = read_conf(conf_dir, "yarn-site.xml")
    addr = props.get("yarn.resourcemanager.webapp.address")
    if not addr:
        addr = f"{props.get('yarn.resourcemanager.hostname', '0.0.0.0')}:8088"
    return f"http://{addr}"


def kerberized(conf_dir: Path) -> bool:
    """Whether the cluster authenticates users (then the web UI knows who asks)."""
    return read_conf(conf_dir, "core-site.xml").get("hadoop.security.authentication", "simple") == "kerberos"


def check_reachable(hadoop: HadoopEnv, timeout_s: float = 3.0) -> None:
    """Raise UnreachableError unless the ResourceManager accepts a TCP connection."""
    host, port = rm_address(hadoop.conf_dir)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return
    except OSError as e:
        raise UnreachableError(f"the ResourceManager at {host}:{port} is unreachable "
                               f"({e.strerror or e}); {_HOW}") from None
