"""A Hadoop client configuration, read as Hadoop's own Configuration reads it.

Real clusters' client configs rely on what Hadoop does and a naive reader
does not: a later file overrides an earlier one unless the property was
``final``; values refer to other properties, Java system properties and the
environment with ``${...}``; the ResourceManager may be an HA pair, and its
web UI HTTPS only. Reading any of these wrong sends the client to 0.0.0.0 or
to the standby RM. Stdlib only: the config is read before anything else runs.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementInclude

from tfyarn import protocol
from tfyarn.cluster.layout import ClusterLayout
from tfyarn.errors import SpecError

CORE_FILES = ("core-site.xml",)
YARN_FILES = ("core-site.xml", "yarn-site.xml")  # what a YarnConfiguration loads, in its order
MAX_SUBST = 20  # Hadoop's bound on substitutions in one value
CLUSTER_INFO = "/ws/v1/cluster/info"  # answers on a standby RM too, with its haState
_REF = re.compile(r"\$\{([^}$ ]+)\}")  # the variable syntax Hadoop's Configuration accepts

# The Java system properties a client's JVM would resolve ${...} against (they win over properties).
_SYSTEM: dict[str, Callable[[], str]] = {
    "user.name": getpass.getuser,
    "user.home": lambda: str(Path.home()),
    "user.dir": os.getcwd,
    "java.io.tmpdir": lambda: "/tmp",
}


@dataclass(frozen=True)
class Conf:
    """The expanded properties of some files of a conf dir, with the file each came from (for messages)."""

    conf_dir: Path
    props: Mapping[str, str]
    sources: Mapping[str, Path]
    main: str  # the file a property set in none of them belongs in

    def get(self, name: str, default: str = "") -> str:
        return self.props.get(name, default)

    def where(self, name: str) -> Path:
        return self.sources.get(name, self.conf_dir / self.main)


def load(conf_dir: Path, files: Sequence[str] = YARN_FILES, environ: Mapping[str, str] | None = None) -> Conf:
    """Load ``files`` of ``conf_dir`` in order (a missing one is empty), as Hadoop's Configuration does.

    A later definition replaces an earlier one, unless that one said ``<final>true</final>``:
    cluster admins mark what users' files must not change. Values are expanded afterwards, so a
    reference sees the property's last value whichever file set it.
    """
    raw: dict[str, str] = {}
    sources: dict[str, Path] = {}
    final: set[str] = set()
    for filename in files:
        path = conf_dir / filename
        for name, value, is_final in _properties(path):
            if name in final:
                continue
            raw[name], sources[name] = value, path
            if is_final:
                final.add(name)
    env = os.environ if environ is None else environ
    props = {name: expand(value, raw, env) for name, value in raw.items()}
    return Conf(conf_dir=conf_dir, props=props, sources=sources, main=files[-1])


def _properties(path: Path) -> list[tuple[str, str, bool]]:
    """(name, value, final) of each ``<property>`` of one file, in order; [] if it does not exist.

    Hadoop takes the fields as child elements or as attributes, and follows ``<xi:include>``.
    """
    if not path.exists():
        return []
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise SpecError(
            f"{path}: not valid XML ({e}); fix the file, or point {protocol.ENV_HADOOP_CONF_DIR} at a "
            "cluster's configuration"
        ) from None
    except OSError as e:
        raise SpecError(f"{path}: cannot be read ({e.strerror or e}); fix its permissions") from None
    try:
        ElementInclude.include(root, base_url=str(path))
    except (OSError, ET.ParseError, ElementInclude.FatalIncludeError) as e:
        why = f"{e.strerror}: {e.filename}" if isinstance(e, OSError) and e.strerror else str(e)
        raise SpecError(f"{path}: an <xi:include> cannot be read ({why}); fix the include or the file") from None
    out = []
    for prop in root.iter("property"):
        name = prop.findtext("name", prop.get("name"))
        value = prop.findtext("value", prop.get("value"))
        final = prop.findtext("final", prop.get("final")) or ""
        if name and name.strip() and value is not None:
            out.append((name.strip(), value.strip(), final.strip().lower() == "true"))
    return out


def expand(value: str, props: Mapping[str, str], environ: Mapping[str, str] | None = None) -> str:
    """``value`` with its ``${...}`` references replaced, left to right, as Hadoop does.

    A reference Hadoop cannot resolve ends the expansion there (the rest stays as written);
    a value that refers to itself, directly or through a cycle (more than MAX_SUBST
    substitutions), stays as written where Hadoop would fail.
    """
    env = os.environ if environ is None else environ
    text = value
    for _ in range(MAX_SUBST):
        m = _REF.search(text)
        if m is None:
            return text
        sub = _resolve(m.group(1), props, env)
        if sub is None:
            return text
        if m.group(0) in sub:
            return value
        text = text[: m.start()] + sub + text[m.end() :]
    return value if _REF.search(text) else text


def _resolve(var: str, props: Mapping[str, str], env: Mapping[str, str]) -> str | None:
    """What ``${var}`` stands for: ``env.NAME`` (with ``:-``/``-`` defaults), a system property, a property."""
    if var.startswith("env.") and len(var) > 4:
        rest = var[4:]
        for i, c in enumerate(rest):
            if c == ":" and rest[i + 1 : i + 2] == "-":  # ${env.X:-d}: d if X is unset or empty
                return env.get(rest[:i]) or rest[i + 2 :]
            if c == "-":  # ${env.X-d}: d if X is unset
                found = env.get(rest[:i])
                return rest[i + 1 :] if found is None else found
        if rest in env:
            return env[rest]
    elif var in _SYSTEM:
        try:
            return _SYSTEM[var]()
        except (OSError, KeyError):  # no user name for this uid
            pass
    return props.get(var)


def find_conf_dir(environ: Mapping[str, str] | None = None, local: Path | None = None) -> tuple[Path, str] | None:
    """The client config dir, and what named it (for messages), looked for as Hadoop's scripts do.

    ``HADOOP_CONF_DIR``, else ``YARN_CONF_DIR``, else ``$HADOOP_HOME/etc/hadoop`` (if it is a dir),
    else the local cluster's (``local``, by default ``tfyarn cluster``'s) if it has a yarn-site.xml.
    A dir named by a variable is returned whether it exists or not: the caller says it is missing.
    """
    env = os.environ if environ is None else environ
    for var in (protocol.ENV_HADOOP_CONF_DIR, protocol.ENV_YARN_CONF_DIR):
        if env.get(var):
            return Path(env[var]), var
    home = env.get(protocol.ENV_HADOOP_HOME)
    if home and (Path(home) / "etc" / "hadoop").is_dir():
        return Path(home) / "etc" / "hadoop", f"{protocol.ENV_HADOOP_HOME}/etc/hadoop"
    local = ClusterLayout().conf_dir if local is None else local
    if (local / "yarn-site.xml").exists():
        return local, "the local cluster"
    return None


@dataclass(frozen=True)
class ResourceManager:
    """One ResourceManager a client may talk to."""

    id: str  # its HA id (rm1); "" for a cluster with one RM
    host: str  # its client RPC address
    port: int
    web: str  # the base URL of its web UI and REST API, e.g. http://rm1.example:8088

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def __str__(self) -> str:
        return f"{self.id} at {self.address}" if self.id else self.address


def _true(value: str) -> bool:
    return value.strip().lower() == "true"


def resource_managers(conf: Conf) -> list[ResourceManager]:
    """The RMs ``conf`` names: the ``yarn.resourcemanager.ha.rm-ids`` of an HA cluster, else the one.

    Each address is its own property if set, else the (per-id) hostname with YARN's default
    port; with ``yarn.http.policy=HTTPS_ONLY`` the web address is the HTTPS one.
    """
    https = conf.get("yarn.http.policy").strip().upper() == "HTTPS_ONLY"
    ids = [i.strip() for i in conf.get("yarn.resourcemanager.ha.rm-ids").split(",") if i.strip()]
    if not (_true(conf.get("yarn.resourcemanager.ha.enabled")) and ids):
        ids = [""]
    rms = []
    for rm_id in ids:
        sfx = f".{rm_id}" if rm_id else ""
        web_key = "yarn.resourcemanager.webapp.https.address" if https else "yarn.resourcemanager.webapp.address"
        host, port = _address(conf, f"yarn.resourcemanager.address{sfx}", rm_id, 8032)
        web_host, web_port = _address(conf, web_key + sfx, rm_id, 8090 if https else 8088)
        rms.append(ResourceManager(rm_id, host, port, f"{'https' if https else 'http'}://{web_host}:{web_port}"))
    return rms


def _address(conf: Conf, key: str, rm_id: str, default_port: int) -> tuple[str, int]:
    """``key`` as (host, port), else the RM's hostname with ``default_port``; SpecError names the property."""
    named = key
    addr = conf.get(key)
    if not addr:
        named = f"yarn.resourcemanager.hostname{'.' + rm_id if rm_id else ''}"
        if rm_id and named not in conf.props:
            raise SpecError(
                f"{conf.where(named)}: the ResourceManager {rm_id} of yarn.resourcemanager.ha.rm-ids has "
                f"neither {key} nor {named}; set one"
            )
        addr = f"{conf.get(named, '0.0.0.0')}:{default_port}"
    host, sep, port = addr.rpartition(":")
    if "${" in addr:
        raise SpecError(
            f"{conf.where(named)}: {named} gives the address {addr!r}, with a reference Hadoop cannot "
            "expand; set what it names, or fix the property"
        )
    if not (sep and host and port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        raise SpecError(
            f"{conf.where(named)}: {named} gives the address {addr!r}, which is not "
            "host:port with a port from 1 to 65535; fix the property"
        )
    return host, int(port)


Fetch = Callable[[str], bytes]  # GET a URL: its body, or an exception whose text says why not


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # the 3xx becomes an HTTPError


def http_fetch(url: str, timeout: float = 3.0) -> bytes:
    """GET ``url`` without following redirects: a standby RM redirects to the active one's answer."""
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers={"Accept": "application/json"}), timeout=timeout) as r:
            return bytes(r.read())
    except urllib.error.HTTPError as e:
        to = e.headers.get("Location") if e.headers and 300 <= e.code < 400 else None
        e.close()
        raise OSError(f"HTTP {e.code} {e.reason}" + (f", redirecting to {to}" if to else "")) from None
    except urllib.error.URLError as e:
        raise OSError(str(e.reason)) from None


@dataclass(frozen=True)
class Pick:
    """Which RM is active (None: none said so), and why each other RM asked is not."""

    active: ResourceManager | None
    reasons: tuple[tuple[ResourceManager, str], ...]

    def why(self) -> str:
        return "; ".join(f"{rm}: {reason}" for rm, reason in self.reasons)


def pick_active(rms: Sequence[ResourceManager], fetch: Fetch = http_fetch) -> Pick:
    """Ask each RM's cluster info in turn for its haState; the first ACTIVE one is the active RM.

    Clients must talk to the active RM: a standby refuses, or redirects. A lone RM that
    answers at all is active (old RMs report no haState).
    """
    reasons: list[tuple[ResourceManager, str]] = []
    for rm in rms:
        try:
            raw = fetch(rm.web + CLUSTER_INFO)
        except Exception as e:  # whatever ``fetch`` raises, its text is the reason
            reasons.append((rm, str(e) or type(e).__name__))
            continue
        if len(rms) == 1:
            return Pick(rm, tuple(reasons))
        try:
            info = json.loads(raw).get("clusterInfo") or {}
            state = str(info.get("haState") or "no haState")
        except (ValueError, AttributeError):
            state = "an answer that is not cluster info"
        if state.upper() == "ACTIVE":
            return Pick(rm, tuple(reasons))
        reasons.append((rm, f"answered {state}"))
    return Pick(None, tuple(reasons))
