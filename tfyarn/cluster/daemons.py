"""Start, find and stop the four Hadoop daemon JVMs of a local cluster.

Each daemon is a plain ``java`` process running the main class that
Hadoop's ``bin/`` scripts start, in its own session, with a pid file and
a marker property (``-Dtfyarn.cluster=<root>``) so that ``down`` can find
everything it started even if a pid file is lost. Leftovers are matched
exactly (whole arguments, whole path components, YARN's container
environment) and stopped with their descendants, never by process group.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tfyarn import protocol
from tfyarn.cluster import secureio
from tfyarn.cluster.java import JAVA17_FLAGS, java_home
from tfyarn.cluster.layout import HOST, MAX_NODES, ClusterLayout
from tfyarn.errors import ClusterError


@dataclass(frozen=True)
class Daemon:
    name: str
    main_class: str
    xmx: str
    port_attr: str  # the Ports field whose port proves it is up

    def pid_file(self, layout: ClusterLayout) -> Path:
        return layout.pid_dir / f"{self.name}.pid"


NAMENODE = Daemon("namenode", "org.apache.hadoop.hdfs.server.namenode.NameNode", "512m", "namenode_rpc")
DATANODE = Daemon("datanode", "org.apache.hadoop.hdfs.server.datanode.DataNode", "384m", "datanode_data")
RESOURCEMANAGER = Daemon(
    "resourcemanager", "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager", "768m", "rm_rpc"
)
NODEMANAGER = Daemon("nodemanager", "org.apache.hadoop.yarn.server.nodemanager.NodeManager", "512m", "nm_rpc")
DAEMONS: tuple[Daemon, ...] = (NAMENODE, DATANODE, RESOURCEMANAGER, NODEMANAGER)
# The NodeManager of nodes 2..N: a smaller heap (it only launches and watches containers) so that
# several fit the 2-core, 24 GiB machine the suite runs on; same main class, name and files per node.
EXTRA_NODEMANAGER = Daemon(NODEMANAGER.name, NODEMANAGER.main_class, "256m", "nm_rpc")
# Their DataNode, likewise smaller: blocks of test-sized files.
EXTRA_DATANODE = Daemon(DATANODE.name, DATANODE.main_class, "256m", "datanode_data")


def marker(layout: ClusterLayout) -> str:
    return f"-Dtfyarn.cluster={layout.root}"


def daemon_env(layout: ClusterLayout) -> dict[str, str]:
    """The daemons' environment; the NodeManager passes PATH etc. into containers.

    PATH leads with the cluster's bin/ (skein's AM and users call ``yarn``)
    and with this Python's bin/, so containers run the same Python as tfyarn.
    """
    env = dict(os.environ)
    path = [str(layout.bin_dir), str(Path(sys.executable).parent), env.get("PATH", "/usr/bin:/bin")]
    env.update(
        {
            "JAVA_HOME": str(java_home()),
            protocol.ENV_HADOOP_CONF_DIR: str(layout.conf_dir),
            "HADOOP_HOME": str(layout.root),
            "PATH": ":".join(path),
        }
    )
    return env


def secure_flags(layout: ClusterLayout) -> list[str]:
    """A Kerberized cluster's daemons read the realm's config (Java has no KRB5_CONFIG)."""
    return [f"-Djava.security.krb5.conf={layout.root / 'kerberos' / 'krb5.conf'}"]


def _classpath(layout: ClusterLayout, daemon: Daemon) -> str:
    """A Kerberized cluster's NodeManagers read container logs through tfyarn's SecureIOUtils (secureio)."""
    if layout.kerberized and daemon.main_class == NODEMANAGER.main_class:
        return f"{secureio.classes_dir(layout)}:{layout.classpath}"
    return layout.classpath


def java_command(layout: ClusterLayout, daemon: Daemon, *args: str) -> list[str]:
    return [
        str(java_home() / "bin" / "java"),
        f"-Xmx{daemon.xmx}",
        *JAVA17_FLAGS,
        marker(layout),
        f"-Dhadoop.log.dir={layout.log_dir}",
        f"-Dhadoop.log.file={daemon.name}.log",
        f"-Dyarn.log.dir={layout.log_dir}",
        f"-Dyarn.log.file={daemon.name}.log",
        "-Dhadoop.root.logger=INFO,RFA",
        "-Dhadoop.security.logger=INFO,RFA",
        *(secure_flags(layout) if layout.kerberized else []),
        "-cp",
        _classpath(layout, daemon),
        daemon.main_class,
        *args,
    ]


def _argv(pid: int) -> list[str]:
    """A process's argv as its elements; [] if unreadable or gone."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="surrogateescape") for a in raw.split(b"\0")[:-1]] if raw else []


def _same_dir(a: str, b: str) -> bool:
    """Whether two absolute paths name one dir (symlinks and ``..`` resolved)."""
    return os.path.isabs(a) and os.path.realpath(a) == os.path.realpath(b)


def _runs_for(argv: list[str], layout: ClusterLayout) -> bool:
    """Whether argv carries this cluster's marker as a whole element.

    A substring test would also match ``-Dtfyarn.cluster=<root>2`` (another
    cluster) or a shell whose command line merely mentions the marker.
    """
    prefix = marker(layout).split("=", 1)[0] + "="
    return any(a.startswith(prefix) and _same_dir(a[len(prefix) :], str(layout.root)) for a in argv)


def running_pid(layout: ClusterLayout, daemon: Daemon) -> int | None:
    """The daemon's pid if its pid file names a live process of this cluster."""
    try:
        pid = int(daemon.pid_file(layout).read_text().strip())
    except (OSError, ValueError):
        return None
    if not _alive(pid):
        return None
    argv = _argv(pid)
    # An unreadable command line (seen briefly on young JVMs) is not proof of death.
    return pid if not argv or (_runs_for(argv, layout) and daemon.main_class in argv) else None


def port_open(port: int, host: str = HOST) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def log_tail(layout: ClusterLayout, daemon: Daemon, lines: int = 12) -> str:
    """The end of a daemon's stdout and log, for error messages."""
    out = []
    for suffix in (".out", ".log"):
        path = layout.log_dir / f"{daemon.name}{suffix}"
        if path.exists():
            out += path.read_text(errors="replace").splitlines()[-lines:]
    return "\n".join(out[-lines:])


def format_namenode(layout: ClusterLayout) -> None:
    """Format HDFS once; an existing name dir is kept (data survives down/up)."""
    if (layout.data_dir / "namenode" / "current" / "VERSION").exists():
        return
    cmd = java_command(layout, NAMENODE, "-format", "-force", "-nonInteractive")
    proc = subprocess.run(cmd, env=daemon_env(layout), capture_output=True, text=True)
    if proc.returncode != 0:
        raise ClusterError(f"formatting HDFS failed (exit {proc.returncode}); see {layout.log_dir}/namenode.log")


def start(layout: ClusterLayout, daemon: Daemon, wrapper: tuple[str, ...] = ()) -> int:
    """Start one daemon (on ``layout``'s node, under ``wrapper`` if any) unless it already runs; return its pid.

    A wrapper must end by exec'ing its arguments, so the pid stays the daemon's.
    """
    pid = running_pid(layout, daemon)
    if pid:
        return pid
    port = getattr(layout.node_ports, daemon.port_attr)
    if port_open(port, layout.host):
        raise ClusterError(
            f"port {layout.host}:{port} for the {daemon.name} is taken by another process; "
            "stop that process (another cluster?) and run `tfyarn cluster up` again"
        )
    layout.pid_dir.mkdir(parents=True, exist_ok=True)
    layout.log_dir.mkdir(parents=True, exist_ok=True)
    with open(layout.log_dir / f"{daemon.name}.out", "ab") as out:
        proc = subprocess.Popen(
            [*wrapper, *java_command(layout, daemon)],
            env=daemon_env(layout),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=layout.root,
        )
    daemon.pid_file(layout).write_text(f"{proc.pid}\n")
    return proc.pid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours counts as gone.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks) of a live process, None if gone.

    The start time tells a process from a later one that reuses its pid.
    """
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # the command name may hold spaces and parens
    return int(fields[1]), int(fields[19])


def _process_table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, start time) of every process visible in /proc."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (st := _stat(int(entry.name))):
            table[int(entry.name)] = st
    return table


def _environ(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    pairs = (item.partition(b"=") for item in raw.split(b"\0"))
    return {k.decode(errors="surrogateescape"): v.decode(errors="surrogateescape") for k, eq, v in pairs if eq}


def _cwd(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def _under(path: str, real_base: str) -> bool:
    """Whether ``path`` is ``real_base`` or inside it, by whole path components.

    A string prefix would put ``/x/cluster2/data`` inside ``/x/cluster``.
    """
    if not os.path.isabs(path):
        return False
    return os.path.commonpath([os.path.realpath(path), real_base]) == real_base


def _is_container(pid: int, nm_locals: list[str]) -> bool:
    """Whether the process belongs to a YARN container of one of these NodeManager local dirs (real paths).

    YARN puts ``CONTAINER_ID`` and ``LOCAL_DIRS`` into every container's
    environment and starts it in a dir under the NodeManager's local dir.
    The environment is required: a user's shell may sit in a container's
    dir (kept for debugging after the container ends) and is no container.
    """
    env = _environ(pid)
    if protocol.ENV_YARN_CONTAINER_ID not in env:
        return False
    places = (_cwd(pid), *env.get(protocol.ENV_LOCAL_DIRS, "").split(","))
    return any(_under(d, nm_local) for d in places for nm_local in nm_locals)


def extra_nodes(layout: ClusterLayout) -> list[int]:
    """The extra nodes (2..) that have a dir under ``<root>/nodes``: every node that may have run."""
    try:
        names = [p.name for p in layout.nodes_dir.iterdir() if p.is_dir()]
    except OSError:
        return []
    return sorted(int(n) for n in names if n.isdigit() and 2 <= int(n) <= MAX_NODES)


def _node_layouts(layout: ClusterLayout, scope: str) -> list[ClusterLayout]:
    """``all``: node 1 and every extra node; ``node``: ``layout``'s node only."""
    if scope == "node":
        return [layout]
    return [layout.for_node(1), *(layout.for_node(i) for i in extra_nodes(layout))]


def _spared(table: dict[int, tuple[int, int]]) -> set[int]:
    """This process and its ancestors: `down` run from a container must not kill itself."""
    spared, pid = set(), os.getpid()
    while pid > 1 and pid not in spared:
        spared.add(pid)
        pid = table.get(pid, (0, 0))[0]
    return spared


def _is_daemon(argv: list[str], layout: ClusterLayout) -> bool:
    """A daemon JVM of this cluster: its marker and a daemon's main class, each a whole argument.

    So a shell or grep that only mentions the marker is not taken for one.
    """
    return _runs_for(argv, layout) and any(d.main_class in argv for d in DAEMONS)


def _strays(layout: ClusterLayout, table: dict[int, tuple[int, int]], spared: set[int], scope: str) -> list[int]:
    """Processes without a pid file: the cluster's daemon JVMs (scope ``all``), and containers of the scope's nodes."""
    nm_locals = [os.path.realpath(n.nm_local_dir) for n in _node_layouts(layout, scope)]
    return [
        pid
        for pid in table
        if pid not in spared and ((scope == "all" and _is_daemon(_argv(pid), layout)) or _is_container(pid, nm_locals))
    ]


def _stray_trees(layout: ClusterLayout, scope: str = "all") -> dict[int, int]:
    """The strays and all their descendants, pid -> start time, never this process or its ancestors.

    Descendants are followed by parent pid rather than by process group:
    a group may hold processes that are not the cluster's (a shell's job).
    """
    table = _process_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    spared, found = _spared(table), {}
    todo = _strays(layout, table, spared, scope)
    while todo:
        pid = todo.pop()
        if pid not in found and pid not in spared:
            found[pid] = table[pid][1]
            todo += children.get(pid, [])
    return found


def _signal(procs: dict[int, int], sig: int) -> None:
    """Signal each process that is still the one recorded (same pid, same start time)."""
    for pid, start in procs.items():
        if (_stat(pid) or (0, None))[1] == start:
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                pass


def _wait_exited(procs: dict[int, int], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(_alive(pid) and (_stat(pid) or (0, None))[1] == start for pid, start in procs.items()):
            return
        time.sleep(0.1)


def stop_strays(layout: ClusterLayout, grace_s: float = 5.0, scope: str = "all") -> int:
    """SIGTERM this cluster's leftover processes and their descendants, SIGKILL what stays.

    ``scope`` ``all``: daemons and containers of every node; ``node``: only
    containers of ``layout``'s node (when one node of a running cluster stops).
    Returns how many processes the first sweep found. A second sweep after
    the grace period also catches processes forked meanwhile.
    """
    first = _stray_trees(layout, scope)
    _signal(first, signal.SIGTERM)
    _wait_exited(first, grace_s)
    rest = {**first, **_stray_trees(layout, scope)}
    _signal(rest, signal.SIGKILL)
    _wait_exited(rest, grace_s)
    return len(first)


def stop_all(layout: ClusterLayout, grace_s: float = 15.0) -> list[str]:
    """Stop every daemon and container process of this cluster; return what was stopped.

    NodeManagers first (they kill their containers), the extra nodes' then
    node 1's, then the RM and HDFS. SIGTERM, then SIGKILL after ``grace_s``.
    """
    layout = layout.for_node(1)
    stopped = [f"node {i} ({n})" for i in extra_nodes(layout) for n in stop_node(layout.for_node(i), grace_s)]
    stopped += [d.name for d in (NODEMANAGER, RESOURCEMANAGER, DATANODE, NAMENODE) if _stop(layout, d, grace_s)]
    strays = stop_strays(layout)
    if strays:
        stopped.append(f"{strays} leftover process(es)")
    return stopped


def stop_node(layout: ClusterLayout, grace_s: float = 15.0) -> list[str]:
    """Stop the NodeManager and DataNode of ``layout``'s (extra) node and any process left of its containers."""
    stopped = [d.name for d in (EXTRA_NODEMANAGER, EXTRA_DATANODE) if _stop(layout, d, grace_s)]
    if strays := stop_strays(layout, scope="node"):
        stopped.append(f"{strays} leftover process(es)")
    return stopped


def _stop(layout: ClusterLayout, daemon: Daemon, grace_s: float) -> bool:
    """SIGTERM ``daemon`` of ``layout`` if it runs and wait up to ``grace_s`` for it; forget its pid file."""
    pid = running_pid(layout, daemon)
    if pid:
        os.kill(pid, signal.SIGTERM)
        _wait_gone([pid], grace_s)
    daemon.pid_file(layout).unlink(missing_ok=True)
    return bool(pid)


def terminate(pid: int, grace_s: float) -> None:
    """SIGTERM one process, SIGKILL it if it is still there after ``grace_s``."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    _wait_gone([pid], grace_s)


def _wait_gone(pids: list[int], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not any(_alive(p) for p in pids):
            return
        time.sleep(0.2)
    for pid in pids:
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
