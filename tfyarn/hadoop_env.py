"""Find the Hadoop cluster a client talks to, and check it answers, fast.

skein needs ``HADOOP_CONF_DIR`` and a ``yarn`` command on PATH. The config
dir is found as Hadoop's scripts find it (tfyarn.hadoopconf), else a local
cluster started by ``tfyarn cluster up`` is used. An unreachable
ResourceManager is reported in seconds, before skein's Java driver would
retry for minutes; of an HA pair, the active one is the one talked to. A
configuration file that is not XML, or an address that is not host:port, is
reported as one line naming the file and the property (SpecError), not as a
parser's traceback.
"""

from __future__ import annotations

import os
import shutil
import socket
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from tfyarn import hadoopconf, protocol
from tfyarn.cluster.layout import ClusterLayout
from tfyarn.errors import UnreachableError

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


def read_conf(conf_dir: Path, filename: str) -> dict[str, str]:
    """The properties Hadoop sees reading one XML file (a missing one adds none), ``${...}`` expanded.

    As Hadoop's Configuration loads them: core-site.xml first, then ``filename``, whose
    properties override core-site's unless those are ``final``; references resolve across
    both, to system properties such as ``${user.name}`` and to ``${env.NAME}``.
    """
    files = hadoopconf.CORE_FILES if filename in hadoopconf.CORE_FILES else (*hadoopconf.CORE_FILES, filename)
    return dict(hadoopconf.load(conf_dir, files).props)


def check_conf(conf_dir: Path) -> None:
    """Raise SpecError now for a configuration file that is not valid XML, before any command uses it."""
    for filename in CONF_FILES:
        hadoopconf.load(conf_dir, (filename,))


def discover() -> HadoopEnv:
    """The client config dir (hadoopconf.find_conf_dir) and a PATH that has ``yarn``."""
    layout = ClusterLayout()
    found = hadoopconf.find_conf_dir(local=layout.conf_dir)
    if found is None:
        unset = f"{protocol.ENV_HADOOP_CONF_DIR}, {protocol.ENV_YARN_CONF_DIR} and {protocol.ENV_HADOOP_HOME}"
        raise UnreachableError(
            f"no Hadoop cluster configured ({unset} are unset, and no local cluster is set up); {_HOW}"
        )
    conf_dir, source = found
    if not conf_dir.is_dir():
        raise UnreachableError(f"{source}={conf_dir} is not a directory; {_HOW}")
    path = os.environ.get("PATH", "")
    home = os.environ.get(protocol.ENV_HADOOP_HOME)
    for bin_dir in ([Path(home) / "bin"] if home else []) + [layout.bin_dir]:
        if not shutil.which("yarn", path=path) and (bin_dir / "yarn").exists():
            path = f"{bin_dir}:{path}"
    if not shutil.which("yarn", path=path):
        raise UnreachableError(f"no `yarn` command on PATH (skein needs it); {_HOW}")
    return HadoopEnv(conf_dir=conf_dir, path=path)


def resource_managers(conf_dir: Path) -> list[hadoopconf.ResourceManager]:
    """The ResourceManagers the config names (two or more for HA); SpecError for a bad address."""
    return hadoopconf.resource_managers(hadoopconf.load(conf_dir, hadoopconf.YARN_FILES))


_fetch: hadoopconf.Fetch = hadoopconf.http_fetch  # how the active RM is asked (tests replace it)
_active: dict[tuple[Path, tuple[hadoopconf.ResourceManager, ...]], hadoopconf.ResourceManager] = {}


def active_rm(conf_dir: Path) -> hadoopconf.ResourceManager:
    """The RM to talk to: the one of an HA pair that says it is active (else the first), asked once a process."""
    rms = resource_managers(conf_dir)
    if len(rms) == 1:
        return rms[0]
    key = (conf_dir.absolute(), tuple(rms))
    if key not in _active:
        _active[key] = hadoopconf.pick_active(rms, _fetch).active or rms[0]
    return _active[key]


def rm_address(conf_dir: Path) -> tuple[str, int]:
    """The (active) ResourceManager's client RPC address."""
    rm = active_rm(conf_dir)
    return rm.host, rm.port


def rm_web(conf_dir: Path) -> str:
    """The (active) ResourceManager's web/REST base URL: https:// when the cluster's policy is HTTPS_ONLY."""
    return active_rm(conf_dir).web


def kerberized(conf_dir: Path) -> bool:
    """Whether the cluster authenticates users (then the web UI knows who asks).

    Hadoop reads the value without regard to case (``KERBEROS`` is Kerberos too).
    """
    auth = read_conf(conf_dir, "core-site.xml").get("hadoop.security.authentication", "simple")
    return auth.strip().lower() == "kerberos"


def namenode_webs(conf_dir: Path) -> list[str]:
    """The web (WebHDFS) base URLs of the default filesystem's NameNodes, each of an HA pair;
    https:// when dfs.http.policy is HTTPS_ONLY. Empty when the default filesystem is not HDFS."""
    hdfs = read_conf(conf_dir, "hdfs-site.xml")
    default = urllib.parse.urlsplit(hdfs.get("fs.defaultFS", ""))
    if default.scheme != "hdfs" or not default.hostname:
        return []
    secure = hdfs.get("dfs.http.policy", "HTTP_ONLY").strip().upper() == "HTTPS_ONLY"
    key, port = ("dfs.namenode.https-address", 9871) if secure else ("dfs.namenode.http-address", 9870)
    ns = default.hostname
    ids = [i.strip() for i in hdfs.get(f"dfs.ha.namenodes.{ns}", "").split(",") if i.strip()]
    found = [hdfs.get(f"{key}.{ns}.{i}", "") for i in ids] if ids else [hdfs.get(f"{key}.{ns}") or hdfs.get(key, "")]
    urls = []
    for addr in found or [""]:
        host, _, p = addr.rpartition(":") if addr else ("", "", "")
        host = ns if host in ("", "0.0.0.0") else host
        urls.append(f"{'https' if secure else 'http'}://{host}:{p or port}")
    return urls


# skein's Java driver serves one command, or (global) a few calls a minute: start it fast rather than run it
# fast. C1 only halves its start's CPU (about 6 -> 3 s on a 2-core machine); an explicit heap, as every JVM.
DRIVER_FLAGS: list[str] = ["-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


def driver_java_options() -> list[str]:
    """skein's driver JVM flags: tfyarn's, the realm's, then the user's SKEIN_DRIVER_JAVA_OPTIONS (last wins)."""
    return [*DRIVER_FLAGS, *java_krb5_options(), *os.environ.get(protocol.ENV_SKEIN_DRIVER_JAVA_OPTIONS, "").split()]


def java_krb5_options() -> list[str]:
    """JVM flags that point Java at ``$KRB5_CONFIG``: MIT's tools read it, Java reads only its property."""
    conf = os.environ.get(protocol.ENV_KRB5_CONFIG)
    return [f"-Djava.security.krb5.conf={conf}"] if conf else []


def check_reachable(hadoop: HadoopEnv, timeout_s: float = 3.0) -> None:
    """Raise UnreachableError unless a ResourceManager (any of an HA pair) accepts a TCP connection."""
    rms = resource_managers(hadoop.conf_dir)
    why = []
    for rm in rms:
        try:
            with socket.create_connection((rm.host, rm.port), timeout=timeout_s):
                return
        except OSError as e:
            why.append(str(e.strerror or e))
    if len(rms) == 1:
        raise UnreachableError(f"the ResourceManager at {rms[0].address} is unreachable ({why[0]}); {_HOW}")
    tried = ", ".join(f"{rm} ({reason})" for rm, reason in zip(rms, why, strict=True))
    raise UnreachableError(f"no ResourceManager is reachable: {tried}; {_HOW}")
