"""`tfyarn cluster up | down | status | env`: a real single-node Hadoop on loopback."""

from __future__ import annotations

import getpass
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfyarn import protocol
from tfyarn.cluster import clusterdir, daemons
from tfyarn.cluster.config import ClusterOptions, config_files
from tfyarn.cluster.jars import ensure_jars
from tfyarn.cluster.java import java_home
from tfyarn.cluster.layout import ClusterLayout
from tfyarn.cluster.scripts import write_scripts
from tfyarn.errors import ClusterError
from tfyarn.rest import fetch_json
from tfyarn.rmnodes import NodeCapacity, fetch_nodes

Progress = Callable[[str], None]
UP_TIMEOUT_S = 180  # how long `up` waits for HDFS, then for YARN, by default


@dataclass
class DaemonState:
    name: str
    pid: int | None
    web: str | None


@dataclass
class ClusterStatus:
    """What `cluster status` shows, as data."""

    root: str
    daemons: list[DaemonState] = field(default_factory=list)
    hdfs_safemode: bool | None = None
    live_datanodes: int | None = None
    running_nodemanagers: int | None = None
    gpus_total: int | None = None

    @property
    def running(self) -> bool:
        return all(d.pid for d in self.daemons)

    @property
    def stopped(self) -> bool:
        return not any(d.pid for d in self.daemons)


class LocalCluster:
    """One cluster dir, its four daemons and the jar cache they run from."""

    def __init__(self, layout: ClusterLayout | None = None, options: ClusterOptions | None = None):
        self.layout = layout or ClusterLayout()
        self.options = options or ClusterOptions()

    # -- probes --------------------------------------------------------------
    def _nn_info(self) -> dict[str, Any] | None:
        data = fetch_json(f"{self.layout.nn_web}/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState")
        beans = (data or {}).get("beans") or []
        return beans[0] if beans else None

    def _safemode(self) -> bool | None:
        data = fetch_json(f"{self.layout.nn_web}/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo")
        beans = (data or {}).get("beans") or []
        return bool(beans[0].get("Safemode")) if beans else None

    def _nodes(self) -> list[NodeCapacity] | None:
        """The RUNNING NodeManagers; None while the ResourceManager does not answer."""
        return fetch_nodes(self.layout.rm_web)

    def _wait(self, what: str, ready: Callable[[], bool], watch: list[daemons.Daemon], timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if ready():
                return
            for d in watch:
                if daemons.running_pid(self.layout, d) is None:
                    raise ClusterError(
                        f"the {d.name} exited while starting; its log ends:\n{daemons.log_tail(self.layout, d)}"
                    )
            time.sleep(0.5)
        raise ClusterError(
            f"timed out after {timeout_s:.0f} s waiting for {what}; see the logs in {self.layout.log_dir}"
        )

    # -- lifecycle -----------------------------------------------------------
    def write_config(self) -> None:
        for path, text in config_files(self.layout, self.options).items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            if text.startswith("#!"):
                path.chmod(0o755)
        write_scripts(self.layout)

    def up(self, progress: Progress, timeout_s: float = UP_TIMEOUT_S) -> ClusterStatus:
        """Fetch jars, write config, start what is not running, wait until usable.

        Idempotent: daemons already running are left alone. On failure,
        the daemons this call started are stopped again.
        """
        t0 = time.monotonic()
        if not clusterdir.claim(self.layout.root):
            progress(
                f"Note: {self.layout.root} holds files that `tfyarn cluster up` did not write, so it is "
                "not marked as a cluster dir and `tfyarn cluster down --purge` will refuse to delete it."
            )
        ensure_jars(self.layout, progress)
        was_running = {d.name for d in daemons.DAEMONS if daemons.running_pid(self.layout, d)}
        if len(was_running) < len(daemons.DAEMONS):
            self.write_config()  # a running daemon keeps the config it read
        else:
            write_scripts(self.layout)
        try:
            daemons.format_namenode(self.layout)
            for d in (daemons.NAMENODE, daemons.DATANODE):
                self._start(d, was_running, progress)
            self._wait(
                "HDFS to leave safe mode with a live DataNode",
                lambda: self._safemode() is False and (self._nn_info() or {}).get("NumLiveDataNodes", 0) >= 1,
                [daemons.NAMENODE, daemons.DATANODE],
                timeout_s,
            )
            progress("HDFS is up.")
            self._mkdirs()
            for d in (daemons.RESOURCEMANAGER, daemons.NODEMANAGER):
                self._start(d, was_running, progress)
            self._wait(
                "a RUNNING NodeManager",
                lambda: bool(self._nodes()),
                [daemons.RESOURCEMANAGER, daemons.NODEMANAGER],
                timeout_s,
            )
        except BaseException:
            if not was_running:
                daemons.stop_all(self.layout)
            raise
        progress(f"YARN is up. Cluster ready in {time.monotonic() - t0:.1f} s.")
        return self.status()

    def _start(self, d: daemons.Daemon, was_running: set[str], progress: Progress) -> None:
        if d.name in was_running:
            progress(f"{d.name} already running (pid {daemons.running_pid(self.layout, d)}).")
            return
        pid = daemons.start(self.layout, d)
        progress(f"Started {d.name} (pid {pid}).")

    def _mkdirs(self) -> None:
        """/user/$USER and the log-aggregation dir, through WebHDFS (no JVM start)."""
        user = getpass.getuser()
        for path, perm in ((f"/user/{user}", "755"), ("/tmp/logs", "1777"), ("/tmp", "1777")):
            url = f"{self.layout.nn_web}/webhdfs/v1{path}?op=MKDIRS&permission={perm}&user.name={user}"
            if not (fetch_json(url, method="PUT") or {}).get("boolean"):
                raise ClusterError(f"could not create {path} on HDFS via {self.layout.nn_web}")

    def down(self, progress: Progress, purge: bool = False) -> list[str]:
        """Stop every daemon and leftover container process; ``purge`` also deletes the cluster dir.

        A purge of a dir without the marker that `up` writes is refused
        before anything is stopped.
        """
        if purge:
            clusterdir.check_purgeable(self.layout.root)
        stopped = daemons.stop_all(self.layout)
        progress("Stopped: " + ", ".join(stopped) if stopped else "Nothing was running.")
        if purge:
            deleted = clusterdir.purge(self.layout.root)
            root = self.layout.root
            progress(f"Deleted {root}." if deleted else f"Nothing to delete: {root} does not exist.")
        return stopped

    def status(self) -> ClusterStatus:
        lay = self.layout
        webs = {
            "namenode": lay.nn_web,
            "datanode": f"http://127.0.0.1:{lay.ports.datanode_http}",
            "resourcemanager": lay.rm_web,
            "nodemanager": lay.nm_web,
        }
        st = ClusterStatus(root=str(lay.root))
        for d in daemons.DAEMONS:
            pid = daemons.running_pid(lay, d)
            st.daemons.append(DaemonState(d.name, pid, webs[d.name] if pid else None))
        if daemons.running_pid(lay, daemons.NAMENODE):
            st.hdfs_safemode = self._safemode()
            st.live_datanodes = (self._nn_info() or {}).get("NumLiveDataNodes")
        if daemons.running_pid(lay, daemons.RESOURCEMANAGER):
            running = self._nodes() or []
            st.running_nodemanagers = len(running)
            st.gpus_total = sum(n.gpus for n in running)
        return st

    def env_lines(self) -> list[str]:
        """The ``export`` lines a shell needs to use this cluster; a shell ``eval``s them, so paths are quoted."""
        lay = self.layout
        return [
            f"export JAVA_HOME={shlex.quote(str(java_home()))}",
            f"export {protocol.ENV_HADOOP_CONF_DIR}={shlex.quote(str(lay.conf_dir))}",
            f'export PATH={shlex.quote(str(lay.bin_dir))}:"$PATH"',
        ]
