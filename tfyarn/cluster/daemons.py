"""Start, find and stop the four Hadoop daemon JVMs of a local cluster.

Each daemon is a plain ``java`` process running the main class that
Hadoop's ``bin/`` scripts start, in its own session, with a pid file and
a marker property (``-Dtfyarn.cluster=<root>``) so that ``down`` can find
everything it started even if a pid file is lost.
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

from tfyarn.cluster.java import JAVA17_FLAGS, java_home
from tfyarn.cluster.layout import HOST, ClusterLayout
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
RESOURCEMANAGER = Daemon("resourcemanager",
                         "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager", "768m", "rm_rpc")
NODEMANAGER = Daemon("nodemanager", "org.apache.hadoop.yarn.server.nodemanager.NodeManager", "512m", "nm_rpc")
DAEMONS: tuple[Daemon, ...] = (NAMENODE, DATANODE, RESOURCEMANAGER, NODEMANAGER)


def marker(layout: ClusterLayout) -> str:
    return f"-Dtfyarn.cluster={layout.root}"


def daemon_env(layout: ClusterLayout) -> dict[str, str]:
    """The daemons' environment; the NodeManager passes PATH etc. into containers.

    PATH leads with the cluster's bin/ (skein's AM and users call ``yarn``)
    and with this Python's bin/, so containers run the same Python as tfyarn.
    """
    env = dict(os.environ)
    path = [str(layout.bin_dir), str(Path(sys.executable).parent), env.get("PATH", "/usr/bin:/bin")]
    env.update({
        "JAVA_HOME": str(java_home()),
        "HADOOP_CONF_DIR": str(layout.conf_dir),
        "HADOOP_HOME": str(layout.root),
        "PATH": ":".join(path),
    })
    return env


def java_command(layout: ClusterLayout, daemon: Daemon, *args: str) -> list[str]:
    return [
        str(java_home() / "bin" / "java"), f"-Xmx{daemon.xmx}", *JAVA17_FLAGS,
        marker(layout),
        f"-Dhadoop.log.dir={layout.log_dir}", f"-Dhadoop.log.file={daemon.name}.log",
        f"-Dyarn.log.dir={layout.log_dir}", f"-Dyarn.log.file={daemon.name}.log",
        "-Dhadoop.root.logger=INFO,RFA", "-Dhadoop.security.logger=INFO,RFA",
        "-cp", layout.classpath, daemon.main_class, *args,
    ]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def running_pid(layout: ClusterLayout, daemon: Daemon) -> int | None:
    """The daemon's pid if its pid file names a live process of this cluster."""
    try:
        pid = int(daemon.pid_file(layout).read_text().strip())
    except (OSError, ValueError):
        return None
    if not _alive(pid):
        return None
    cmd = _cmdline(pid)
    # An unreadable command line (seen briefly on young JVMs) is not proof of death.
    return pid if not cmd or (marker(layout) in cmd and daemon.main_class in cmd) else None


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


def start(layout: ClusterLayout, daemon: Daemon) -> int:
    """Start one daemon unless it already runs; return its pid."""
    pid = running_pid(layout, daemon)
    if pid:
        return pid
    port = getattr(layout.ports, daemon.port_attr)
    if port_open(port):
        raise ClusterError(f"port {port} for the {daemon.name} is taken by another process; "
                           "stop that process (another cluster?) and run `tfyarn cluster up` again")
    layout.pid_dir.mkdir(parents=True, exist_ok=True)
    layout.log_dir.mkdir(parents=True, exist_ok=True)
    with open(layout.log_dir / f"{daemon.name}.out", "ab") as out:
        proc = subprocess.Popen(java_command(layout, daemon), env=daemon_env(layout), stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=layout.root)
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


def _strays(layout: ClusterLayout) -> list[int]:
    """Processes of this cluster without a pid file: daemons, and containers' trees.

    Containers run under the NodeManager's local dir, so their command line
    or working directory lies inside the cluster root.
    """
    root = str(layout.root)
    me = {os.getpid(), os.getppid()}
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in me:
            continue
        pid = int(entry.name)
        cmd = _cmdline(pid)
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            cwd = ""
        if marker(layout) in cmd or cwd.startswith(root + "/data/") or f"{root}/data/nm-local" in cmd:
            found.append(pid)
    return found


def stop_all(layout: ClusterLayout, grace_s: float = 15.0) -> list[str]:
    """Stop every daemon and container process of this cluster; return what was stopped.

    NodeManager first (it kills its containers), then the RM and HDFS.
    SIGTERM, then SIGKILL after ``grace_s``.
    """
    stopped = []
    for daemon in (NODEMANAGER, RESOURCEMANAGER, DATANODE, NAMENODE):
        pid = running_pid(layout, daemon)
        if pid:
            os.kill(pid, signal.SIGTERM)
            stopped.append(daemon.name)
            _wait_gone([pid], grace_s)
        daemon.pid_file(layout).unlink(missing_ok=True)
    strays = _strays(layout)
    for pid in strays:
        _signal_tree(pid, signal.SIGTERM)
    _wait_gone(strays, 5.0)
    for pid in _strays(layout):
        _signal_tree(pid, signal.SIGKILL)
    if strays:
        stopped.append(f"{len(strays)} leftover process(es)")
    return stopped


def _signal_tree(pid: int, sig: int) -> None:
    try:
        pgid = os.getpgid(pid)
        if pgid != os.getpgid(0):
            os.killpg(pgid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


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
