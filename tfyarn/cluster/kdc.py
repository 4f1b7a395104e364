"""The local cluster's Kerberos KDC (`tfyarn cluster up --kerberos`): MIT krb5kdc on loopback.

A realm of the cluster's own, kept under ``<root>/kerberos/``: the KDC's
database, its config, a ``krb5.conf`` for clients (what ``cluster env``
exports as KRB5_CONFIG), and one keytab per service and per user. Nothing
outside the cluster dir is touched: no /etc/krb5.conf, no system KDC.

Principals carry a fixed host part (``hdfs/localhost``) rather than Hadoop's
``_HOST`` pattern: every node here is one machine, and a fixed name keeps
clients' service-ticket requests independent of reverse DNS.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tfyarn import protocol
from tfyarn.cluster.layout import HOST, MAX_NODES, ClusterLayout
from tfyarn.errors import ClusterError

REALM = "TFYARN.LOCAL"
KDC_PORT = 10088  # loopback only, TCP and UDP
DEBIAN_PACKAGES = ("krb5-kdc", "krb5-admin-server", "krb5-user")
USERS = ("alice", "bob")  # user principals with keytabs, for tests and demos


@dataclass(frozen=True)
class Principal:
    """One principal and the keytab file (under ``<root>/kerberos/keytabs``) that holds its keys."""

    name: str
    keytab: str

    def full(self) -> str:
        return f"{self.name}@{REALM}"


HDFS = Principal("hdfs/localhost", "hdfs.keytab")  # NameNode and DataNodes; HDFS's superuser "hdfs"
YARN = Principal("yarn/localhost", "yarn.keytab")  # ResourceManager and NodeManagers
# SPNEGO: a browser or client asks for HTTP/<the host in the URL>; every node's address has one.
HTTP = tuple(
    Principal(f"HTTP/{h}", "http.keytab") for h in ("localhost", *(f"127.0.0.{i}" for i in range(1, MAX_NODES + 1)))
)
SERVICES: tuple[Principal, ...] = (HDFS, YARN, *HTTP)


def user_principal(user: str) -> Principal:
    return Principal(user, f"{user}.keytab")


def kerberos_dir(layout: ClusterLayout) -> Path:
    return layout.root / "kerberos"


def enabled(layout: ClusterLayout) -> bool:
    """Whether this cluster was set up with Kerberos (its KDC database exists)."""
    return layout.kerberized


def krb5_conf(layout: ClusterLayout) -> Path:
    return kerberos_dir(layout) / "krb5.conf"


def keytab(layout: ClusterLayout, p: Principal) -> Path:
    return kerberos_dir(layout) / "keytabs" / p.keytab


def admin_ccache(layout: ClusterLayout) -> Path:
    """The ticket cache `cluster up/status` itself uses (as hdfs, HDFS's superuser) for its probes."""
    return kerberos_dir(layout) / "admin.ccache"


def _pid_file(layout: ClusterLayout) -> Path:
    return layout.pid_dir / "kdc.pid"


def render_krb5_conf() -> str:
    """Clients' config: this realm only, its KDC over TCP (Java and MIT alike), no DNS."""
    return f"""# Written by `tfyarn cluster up --kerberos`: the local cluster's realm.
[libdefaults]
  default_realm = {REALM}
  dns_lookup_kdc = false
  dns_lookup_realm = false
  dns_canonicalize_hostname = false
  rdns = false
  udp_preference_limit = 1
  ticket_lifetime = 24h
  renew_lifetime = 7d
  forwardable = true
[realms]
  {REALM} = {{
    kdc = {HOST}:{KDC_PORT}
  }}
"""


def render_kdc_conf(layout: ClusterLayout) -> str:
    d = kerberos_dir(layout)
    return f"""# Written by `tfyarn cluster up --kerberos`: the local cluster's KDC.
[kdcdefaults]
  kdc_listen = {HOST}:{KDC_PORT}
  kdc_tcp_listen = {HOST}:{KDC_PORT}
[realms]
  {REALM} = {{
    database_name = {d / "db" / "principal"}
    key_stash_file = {d / "db" / "stash"}
    acl_file = {d / "kadm5.acl"}
    max_life = 1d
    max_renewable_life = 7d
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }}
[logging]
  kdc = FILE:{layout.log_dir / "kdc.log"}
"""


def tool_env(layout: ClusterLayout) -> dict[str, str]:
    """The environment for MIT tools (kdb5_util, kadmin.local, krb5kdc, kinit) aimed at this realm."""
    d = kerberos_dir(layout)
    return dict(os.environ) | {
        protocol.ENV_KRB5_CONFIG: str(d / "krb5.conf"),
        "KRB5_KDC_PROFILE": str(d / "kdc.conf"),
    }


def _tool(name: str) -> str:
    for base in (None, "/usr/sbin", "/usr/bin"):
        found = shutil.which(name) if base is None else (f"{base}/{name}" if Path(base, name).exists() else None)
        if found:
            return found
    raise ClusterError(
        f"`{name}` not found: `cluster up --kerberos` runs MIT Kerberos; install it with "
        f"`apt-get install {' '.join(DEBIAN_PACKAGES)}`"
    )


def _run(layout: ClusterLayout, *argv: str) -> str:
    r = subprocess.run([_tool(argv[0]), *argv[1:]], env=tool_env(layout), capture_output=True, text=True)
    if r.returncode != 0:
        last = (r.stderr.strip() or r.stdout.strip() or "no output").splitlines()[-1]
        raise ClusterError(f"`{argv[0]}` failed (exit {r.returncode}): {last}")
    return r.stdout


def kadmin(layout: ClusterLayout, query: str) -> str:
    """One kadmin.local query against the realm's database (the KDC need not run)."""
    return _run(layout, "kadmin.local", "-r", REALM, "-q", query)


def create(layout: ClusterLayout, users: tuple[str, ...] = USERS) -> bool:
    """The realm, its service and user principals and their keytabs; False if it exists already."""
    if enabled(layout):
        return False
    d = kerberos_dir(layout)
    (d / "db").mkdir(parents=True, exist_ok=True)
    (d / "keytabs").mkdir(exist_ok=True)
    layout.log_dir.mkdir(parents=True, exist_ok=True)
    (d / "krb5.conf").write_text(render_krb5_conf())
    (d / "kdc.conf").write_text(render_kdc_conf(layout))
    (d / "kadm5.acl").write_text(f"*/admin@{REALM} *\n")
    # The master key only guards the database file; it lives in the stash beside it.
    _run(layout, "kdb5_util", "create", "-s", "-r", REALM, "-P", secrets.token_hex(16))
    for p in (*SERVICES, *(user_principal(u) for u in users)):
        kadmin(layout, f"addprinc -randkey {p.full()}")
        kadmin(layout, f"ktadd -k {keytab(layout, p)} {p.full()}")
    for kt in (d / "keytabs").iterdir():
        kt.chmod(0o600)
    return True


def running_pid(layout: ClusterLayout) -> int | None:
    try:
        pid = int(_pid_file(layout).read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return pid if b"krb5kdc" in cmd and str(_pid_file(layout)).encode() in cmd else None


def start(layout: ClusterLayout, timeout_s: float = 20.0) -> int:
    """krb5kdc in the foreground of its own session (pid file, log in the cluster's logs)."""
    pid = running_pid(layout)
    if pid:
        return pid
    layout.pid_dir.mkdir(parents=True, exist_ok=True)
    log = (layout.log_dir / "kdc.out").open("ab")
    # -r: the realm; -n: stay in the foreground so the pid is ours. krb5kdc's own pid file (-P)
    # is the same path, which also puts this cluster's path on its command line for running_pid.
    proc = subprocess.Popen(
        [_tool("krb5kdc"), "-n", "-r", REALM, "-P", str(_pid_file(layout))],
        env=tool_env(layout),
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    _pid_file(layout).write_text(f"{proc.pid}\n")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ClusterError(f"the KDC exited at start (exit {proc.returncode}); see {layout.log_dir / 'kdc.log'}")
        if _answers(layout):
            return proc.pid
        time.sleep(0.2)
    raise ClusterError(f"the KDC did not answer within {timeout_s:.0f} s; see {layout.log_dir / 'kdc.log'}")


def _answers(layout: ClusterLayout) -> bool:
    """Whether the KDC issues the admin ticket (a real round trip, not just an open port)."""
    return login(layout, HDFS, admin_ccache(layout), check=False)


def login(layout: ClusterLayout, p: Principal, ccache: Path, check: bool = True) -> bool:
    """kinit ``p`` from its keytab into ``ccache``."""
    r = subprocess.run(
        [_tool("kinit"), "-kt", str(keytab(layout, p)), p.full()],
        env=tool_env(layout) | {"KRB5CCNAME": f"FILE:{ccache}"},
        capture_output=True,
        text=True,
    )
    if r.returncode != 0 and check:
        raise ClusterError(f"kinit as {p.full()} failed: {r.stderr.strip()}")
    return r.returncode == 0


def admin_env(layout: ClusterLayout) -> dict[str, str]:
    """What this process needs in its environment to probe the cluster's SPNEGO endpoints as hdfs."""
    return {protocol.ENV_KRB5_CONFIG: str(krb5_conf(layout)), protocol.ENV_KRB5CCNAME: f"FILE:{admin_ccache(layout)}"}


def stop(layout: ClusterLayout, timeout_s: float = 10.0) -> bool:
    pid = running_pid(layout)
    if not pid:
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and running_pid(layout):
        time.sleep(0.1)
    if running_pid(layout):
        os.kill(pid, signal.SIGKILL)
    _pid_file(layout).unlink(missing_ok=True)
    return True
