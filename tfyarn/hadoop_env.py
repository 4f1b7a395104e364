"""Find the Hadoop cluster a client talks to, and check it answers, fast.

skein needs ``HADOOP_CONF_DIR`` and a ``yarn`` command on PATH. When the
user set neither, a local cluster started by ``tfyarn cluster up`` is used.
An unreachable ResourceManager is reported in seconds, before skein's Java
driver would retry for minutes. A configuration file that is not XML, or an
address that is not host:port, is reported as one line naming the file and
the property (SpecError), not as a parser's traceback.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from tfyarn import protocol
from tfyarn.cluster.layout import ClusterLayout
from tfyarn.errors import SpecError, UnreachableError

_HOW = (
    f"start the local cluster with `tfyarn cluster up`, or point {protocol.ENV_HADOOP_CONF_DIR} at a "
    "running cluster's configuration (with its `yarn` command on PATH)"
)


@dataclass(frozen=True)
class HadoopEnv:
    conf_dir: Path
    path: str  # PATH with a `yarn` on it

    def apply(self) -> None:
        """Export the settings for skein (which reads them from os.environ)."""
        os.environ[protocol.ENV_HADOOP_CONF_DIR] = str(self.conf_dir)
        os.environ["PATH"] = self.path


CONF_FILES = ("core-site.xml", "yarn-site.xml", "hdfs-site.xml")
_VAR = re.compile(r"\$\{([^}$]+)\}")


def read_conf(conf_dir: Path, filename: str) -> dict[str, str]:
    """The properties of one Hadoop XML file (missing file: empty), ``${name}`` references expanded.

    Hadoop expands ``${other.property}`` in values, and clusters' yarn-site.xml
    often writes addresses that way; a reference to no property stays as it is.
    """
    path = conf_dir / filename
    if not path.exists():
        return {}
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise SpecError(
            f"{path}: not valid XML ({e}); fix the file, or point {protocol.ENV_HADOOP_CONF_DIR} at a "
            "cluster's configuration"
        ) from None
    except OSError as e:
        raise SpecError(f"{path}: cannot be read ({e.strerror or e}); fix its permissions") from None
    props = {}
    for prop in root.iter("property"):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name is not None:
            props[name.strip()] = (value or "").strip()
    return {k: _expand(v, props) for k, v in props.items()}


def _expand(value: str, props: dict[str, str], depth: int = 8) -> str:
    for _ in range(depth):  # bounded, as Hadoop's is: a reference cycle stays unexpanded
        new = _VAR.sub(lambda m: props.get(m.group(1), m.group(0)), value)
        if new == value:
            break
        value = new
    return value


def check_conf(conf_dir: Path) -> None:
    """Raise SpecError now for a configuration file that is not valid XML, before any command uses it."""
    for filename in CONF_FILES:
        read_conf(conf_dir, filename)


def discover() -> HadoopEnv:
    """HADOOP_CONF_DIR (or the local cluster's) and a PATH that has ``yarn``."""
    env_dir = os.environ.get(protocol.ENV_HADOOP_CONF_DIR)
    layout = ClusterLayout()
    path = os.environ.get("PATH", "")
    if env_dir:
        conf_dir = Path(env_dir)
        if not conf_dir.is_dir():
            raise UnreachableError(f"{protocol.ENV_HADOOP_CONF_DIR}={env_dir} is not a directory; {_HOW}")
    elif (layout.conf_dir / "yarn-site.xml").exists():
        conf_dir = layout.conf_dir
    else:
        raise UnreachableError(f"no Hadoop cluster configured ({protocol.ENV_HADOOP_CONF_DIR} is unset); {_HOW}")
    if not shutil.which("yarn", path=path) and (layout.bin_dir / "yarn").exists():
        path = f"{layout.bin_dir}:{path}"
    if not shutil.which("yarn", path=path):
        raise UnreachableError(f"no `yarn` command on PATH (skein needs it); {_HOW}")
    return HadoopEnv(conf_dir=conf_dir, path=path)


def _rm_host_port(conf_dir: Path, key: str, default_port: int) -> tuple[str, int]:
    """``key`` of yarn-site.xml (else yarn.resourcemanager.hostname and the default port) as (host, port)."""
    props = read_conf(conf_dir, "yarn-site.xml")
    named = key if props.get(key) else "yarn.resourcemanager.hostname"
    addr = props.get(key) or f"{props.get('yarn.resourcemanager.hostname', '0.0.0.0')}:{default_port}"
    host, sep, port = addr.rpartition(":")
    if not (sep and host and port.isdigit() and 0 < int(port) < 65536):
        raise SpecError(
            f"{conf_dir / 'yarn-site.xml'}: {named} gives the address {addr!r}, which is not "
            "host:port with a port from 1 to 65535; fix the property"
        )
    return host, int(port)


def rm_address(conf_dir: Path) -> tuple[str, int]:
    """The ResourceManager's client RPC address."""
    return _rm_host_port(conf_dir, "yarn.resourcemanager.address", 8032)


def rm_web(conf_dir: Path) -> str:
    """The ResourceManager's web/REST base URL."""
    host, port = _rm_host_port(conf_dir, "yarn.resourcemanager.webapp.address", 8088)
    return f"http://{host}:{port}"


def kerberized(conf_dir: Path) -> bool:
    """Whether the cluster authenticates users (then the web UI knows who asks).

    Hadoop reads the value without regard to case (``KERBEROS`` is Kerberos too).
    """
    auth = read_conf(conf_dir, "core-site.xml").get("hadoop.security.authentication", "simple")
    return auth.strip().lower() == "kerberos"


def check_reachable(hadoop: HadoopEnv, timeout_s: float = 3.0) -> None:
    """Raise UnreachableError unless the ResourceManager accepts a TCP connection."""
    host, port = rm_address(hadoop.conf_dir)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return
    except OSError as e:
        raise UnreachableError(
            f"the ResourceManager at {host}:{port} is unreachable ({e.strerror or e}); {_HOW}"
        ) from None
