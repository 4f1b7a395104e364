"""`tfyarn cluster up | down | status | env`: a real Hadoop on loopback, one node or several."""

from __future__ import annotations

import dataclasses
import getpass
import os
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfyarn import protocol
from tfyarn.cluster import clusterdir, daemons, driver, historyd, kdc, labels, nodes, secure, secureio
from tfyarn.cluster.config import ClusterOptions, capacity_scheduler, config_files, to_xml
from tfyarn.cluster.jars import ensure_jars
from tfyarn.cluster.java import java_home
from tfyarn.cluster.layout import ClusterLayout
from tfyarn.cluster.nodestatus import NodeState, node_states, same_host
from tfyarn.cluster.scripts import write_scripts
from tfyarn.errors import ClusterError
from tfyarn.rest import fetch, fetch_json
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
    node_count: int = 1  # how many nodes the cluster is to run (the last `up --nodes`)
    nodes: list[NodeState] = field(default_factory=list)
    skein_driver_pid: int | None = None  # the global driver tfyarn's commands reuse (none when Kerberized)
    history_pid: int | None = None  # `tfyarn history serve` on HISTORY_PORT (none when Kerberized)

    @property
    def running(self) -> bool:
        return all(d.pid for d in self.daemons) and all(n.nodemanager_pid and n.datanode_pid for n in self.nodes)

    @property
    def stopped(self) -> bool:
        return not any(d.pid for d in self.daemons) and not any(n.nodemanager_pid or n.datanode_pid for n in self.nodes)


class LocalCluster:
    """One cluster dir, its four daemons, its extra nodes' NodeManagers and the jar cache they run from."""

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

    def _running_hosts(self, want: set[str]) -> Callable[[], bool]:
        """A probe: whether every address in ``want`` is a RUNNING node of the RM."""
        return lambda: all(any(same_host(n.host, w) for n in self._nodes() or []) for w in want)

    def _wait(
        self,
        what: str,
        ready: Callable[[], bool],
        watch: list[daemons.Daemon],
        timeout_s: float,
        watch_nodes: tuple[ClusterLayout, ...] = (),
    ) -> None:
        deadline = time.monotonic() + timeout_s
        watched = [(self.layout, d) for d in watch]
        watched += [(n, d) for n in watch_nodes for d in (daemons.EXTRA_NODEMANAGER, daemons.EXTRA_DATANODE)]
        while time.monotonic() < deadline:
            if ready():
                return
            for lay, d in watched:
                if daemons.running_pid(lay, d) is None:
                    where = f"node {lay.node}'s " if lay.node > 1 else ""
                    raise ClusterError(
                        f"{where}{d.name} exited while starting; its log ends:\n{daemons.log_tail(lay, d)}"
                    )
            time.sleep(0.5)
        raise ClusterError(
            f"timed out after {timeout_s:.0f} s waiting for {what}; see the logs in {self.layout.log_dir}"
        )

    # -- lifecycle -----------------------------------------------------------
    def write_config(self, layout: ClusterLayout | None = None) -> None:
        """The config files of node 1 (and the client commands), or of the node ``layout`` views."""
        for path, text in config_files(layout or self.layout, self.options).items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            if text.startswith("#!"):
                path.chmod(0o755)
        if layout is None:
            write_scripts(self.layout)

    def up(self, progress: Progress, timeout_s: float = UP_TIMEOUT_S) -> ClusterStatus:
        """Fetch jars, write config, start what is not running, wait until usable.

        Idempotent and declarative about nodes: daemons already running are
        left alone, missing nodes up to ``options.nodes`` (default: the count
        the cluster remembers) are started, nodes beyond it stopped. On
        failure, the daemons this call started are stopped again.
        """
        t0 = time.monotonic()
        if not clusterdir.claim(self.layout.root):
            progress(
                f"Note: {self.layout.root} holds files that `tfyarn cluster up` did not write, so it is "
                "not marked as a cluster dir and `tfyarn cluster down --purge` will refuse to delete it."
            )
        ensure_jars(self.layout, progress)
        self._kerberos(progress)
        want = self.options.nodes or nodes.remembered_count(self.layout)
        want_labels = labels.remembered(self.layout) if self.options.labels is None else self.options.labels
        if beyond := sorted(n for n in want_labels if n > want):
            raise ClusterError(f"--labels: node {beyond[0]} is not one of the cluster's nodes 1..{want}")
        self.options = dataclasses.replace(self.options, nodes=want, labels=want_labels)
        nodes.remember_count(self.layout, want)
        labels.remember(self.layout, want_labels)
        self._shrink(want, progress)
        was_running = {d.name for d in daemons.DAEMONS if daemons.running_pid(self.layout, d)}
        started: list[ClusterLayout] = []
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
                self._running_hosts({self.layout.host}),
                [daemons.RESOURCEMANAGER, daemons.NODEMANAGER],
                timeout_s,
            )
            extra = tuple(self.layout.for_node(i) for i in range(2, want + 1))
            started = [n for n in extra if self._start_node(n, progress)]
            self._wait(
                f"{want} RUNNING NodeManagers and {want} live DataNodes",
                lambda: (
                    self._running_hosts({self.layout.host, *(n.host for n in extra)})()
                    and (self._nn_info() or {}).get("NumLiveDataNodes", 0) >= want
                ),
                [daemons.RESOURCEMANAGER, daemons.NODEMANAGER, daemons.DATANODE],
                timeout_s,
                extra,
            )
            self._label(want_labels, progress)
            if not self.layout.kerberized and not driver.running_pid(self.layout):
                progress("Starting skein's global driver for tfyarn's commands...")
                driver.start(self.layout)
            if not self.layout.kerberized and not historyd.running_pid(self.layout):
                progress(f"Starting the history page at {historyd.url()} ...")
                try:  # a nicety: the cluster is up without it (e.g. another process holds its port)
                    historyd.start(self.layout)
                except ClusterError as e:
                    progress(f"Note: {e}")
        except BaseException:
            if not was_running:
                historyd.stop(self.layout)
                driver.stop(self.layout)
                daemons.stop_all(self.layout)
            for n in started:
                daemons.stop_node(n)
            raise
        progress(f"YARN is up with {want} node(s). Cluster ready in {time.monotonic() - t0:.1f} s.")
        return self.status()

    def _kerberos(self, progress: Progress) -> None:
        """Create the realm (a new cluster asked for it), start its KDC, and log this process in as hdfs."""
        lay = self.layout
        if self.options.kerberos and not lay.kerberized:
            if (lay.data_dir / "namenode").exists():
                raise ClusterError(
                    f"{lay.root} holds a cluster set up without Kerberos; --kerberos needs a new cluster: "
                    "`tfyarn cluster down --purge` it first, or pass another --dir"
                )
            kdc.create(lay)
            secure.ensure_keystores(lay)
            secure.ensure_secret(lay)
            progress(f"Kerberos realm {kdc.REALM} created; keytabs in {kdc.kerberos_dir(lay) / 'keytabs'}.")
        if lay.kerberized:
            secureio.ensure(lay)
            progress(f"KDC running on 127.0.0.1:{kdc.KDC_PORT} (pid {kdc.start(lay)}).")
            self._as_admin()

    def _as_admin(self) -> None:
        """Probe a Kerberized cluster's SPNEGO and HTTPS endpoints as hdfs, HDFS's superuser."""
        lay = self.layout
        if lay.kerberized:
            kdc.login(lay, kdc.HDFS, kdc.admin_ccache(lay))
            os.environ.update(kdc.admin_env(lay) | {protocol.ENV_CA_FILE: str(secure.ca_pem(lay))})

    def _label(self, want: dict[int, str], progress: Progress) -> None:
        """Give the RM the node labels ``want`` (node -> label), and the queues their share of each."""
        rm_nodes = self._nodes() or []
        hosts = {}
        for i in range(1, (self.options.nodes or 1) + 1):
            rec = next((n for n in rm_nodes if same_host(n.host, self.layout.for_node(i).host)), None)
            if rec is not None:
                hosts[i] = rec.node_id

        def write_queues() -> None:
            path = self.layout.conf_dir / "capacity-scheduler.xml"
            path.write_text(to_xml(capacity_scheduler(self.options.label_names)))

        labels.apply(self.layout, want, hosts, progress, write_queues)

    def _start_node(self, node: ClusterLayout, progress: Progress) -> bool:
        """Start an extra node's NodeManager (own config, own /tmp) and DataNode unless they run;
        return whether anything was started."""
        pid = daemons.running_pid(node, daemons.EXTRA_NODEMANAGER)
        dn_pid = daemons.running_pid(node, daemons.EXTRA_DATANODE)
        if pid and dn_pid:
            progress(
                f"node {node.node}: nodemanager and datanode already running on {node.host} (pid {pid}, {dn_pid})."
            )
            return False
        self.write_config(node)
        if not dn_pid:
            dn_pid = daemons.start(node, daemons.EXTRA_DATANODE)
            progress(f"Started node {node.node}'s datanode on {node.host} (pid {dn_pid}).")
        if pid:
            return True
        problem = nodes.unshare_problem()
        if problem:
            progress(f"Note: node {node.node} shares this machine's /tmp ({problem}).")
        if not problem:
            nodes.write_wrapper(node)
        wrapper = () if problem else nodes.private_tmp_wrapper(node)
        pid = daemons.start(node, daemons.EXTRA_NODEMANAGER, wrapper)
        progress(f"Started node {node.node}'s nodemanager on {node.host} (pid {pid}).")
        return True

    def _shrink(self, want: int, progress: Progress) -> None:
        """Stop the nodes numbered above ``want``; the RM then lists them as SHUTDOWN."""
        for i in daemons.extra_nodes(self.layout):
            if i > want and (stopped := daemons.stop_node(self.layout.for_node(i))):
                progress(f"Stopped node {i} ({', '.join(stopped)}): the cluster is to run {want} node(s).")

    def _start(self, d: daemons.Daemon, was_running: set[str], progress: Progress) -> None:
        if d.name in was_running:
            progress(f"{d.name} already running (pid {daemons.running_pid(self.layout, d)}).")
            return
        pid = daemons.start(self.layout, d)
        progress(f"Started {d.name} (pid {pid}).")

    def _mkdirs(self) -> None:
        """The users' home dirs and the log-aggregation dir, through WebHDFS (no JVM start).

        On a Kerberized cluster the users are its principals alice and bob,
        with homes only they can read, and the calls go as hdfs (SPNEGO);
        otherwise as this OS user.
        """
        web = f"{self.layout.nn_web}/webhdfs/v1"
        users: tuple[str, ...]  # (MKDIRS gives parents it creates the child's permission: /user first)
        if self.layout.kerberized:
            users, auth = kdc.USERS, ""
        else:
            users, auth = (getpass.getuser(),), f"&user.name={getpass.getuser()}"
        # A Kerberized cluster's users keep their homes (job records, outputs) to themselves.
        home = "700" if self.layout.kerberized else "755"
        dirs = [("/user", "755", None), *((f"/user/{u}", home, u) for u in users)]
        dirs += [("/tmp/logs", "1777", None), ("/tmp", "1777", None)]
        for path, perm, owner in dirs:
            if not (fetch_json(f"{web}{path}?op=MKDIRS&permission={perm}{auth}", method="PUT") or {}).get("boolean"):
                raise ClusterError(f"could not create {path} on HDFS via {self.layout.nn_web}")
            if owner and self.layout.kerberized:
                url = f"{web}{path}?op=SETOWNER&owner={owner}"
                if fetch(url, method="PUT") is None:
                    raise ClusterError(f"could not give {path} to {owner} on HDFS via {self.layout.nn_web}")

    def down(self, progress: Progress, purge: bool = False) -> list[str]:
        """Stop every daemon and leftover container process; ``purge`` also deletes the cluster dir.

        A purge of a dir without the marker that `up` writes is refused
        before anything is stopped.
        """
        if purge:
            clusterdir.check_purgeable(self.layout.root)
        stopped = ["history page"] if historyd.stop(self.layout) else []
        stopped += ["skein driver"] if driver.stop(self.layout) else []
        stopped += daemons.stop_all(self.layout)
        if kdc.stop(self.layout):
            stopped.append("kdc")
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
            "datanode": f"https://127.0.0.1:{lay.ports.datanode_https}"
            if lay.kerberized
            else f"http://127.0.0.1:{lay.ports.datanode_http}",
            "resourcemanager": lay.rm_web,
            "nodemanager": lay.nm_web,
        }
        st = ClusterStatus(root=str(lay.root))
        if lay.kerberized:
            pid = kdc.running_pid(lay)
            st.daemons.append(DaemonState("kdc", pid, f"kerberos://127.0.0.1:{kdc.KDC_PORT}" if pid else None))
            if pid:
                self._as_admin()
        for d in daemons.DAEMONS:
            pid = daemons.running_pid(lay, d)
            st.daemons.append(DaemonState(d.name, pid, webs[d.name] if pid else None))
        if daemons.running_pid(lay, daemons.NAMENODE):
            st.hdfs_safemode = self._safemode()
            st.live_datanodes = (self._nn_info() or {}).get("NumLiveDataNodes")
        rm_nodes = None
        if daemons.running_pid(lay, daemons.RESOURCEMANAGER):
            rm_nodes = fetch_nodes(lay.rm_web, all_states=True)
            running = [n for n in rm_nodes or [] if n.state == "RUNNING"]
            st.running_nodemanagers = len(running)
            st.gpus_total = sum(n.gpus for n in running)
        st.skein_driver_pid = driver.running_pid(lay)
        st.history_pid = historyd.running_pid(lay)
        st.node_count = nodes.remembered_count(lay)
        st.nodes = node_states(lay, st.node_count, rm_nodes)
        return st

    def env_lines(self) -> list[str]:
        """The ``export`` lines a shell needs to use this cluster; a shell ``eval``s them, so paths are quoted."""
        lay = self.layout
        lines = [
            f"export JAVA_HOME={shlex.quote(str(java_home()))}",
            f"export {protocol.ENV_HADOOP_CONF_DIR}={shlex.quote(str(lay.conf_dir))}",
            f'export PATH={shlex.quote(str(lay.bin_dir))}:"$PATH"',
        ]
        if not lay.kerberized:  # where tfyarn's commands find the cluster's skein global driver
            lines.append(f"export {protocol.ENV_SKEIN_CONFIG}={shlex.quote(str(driver.skein_dir(lay)))}")
        if lay.kerberized:  # the realm's config for kinit, tfyarn and its JVMs; the cluster CA for HTTPS
            lines += [
                f"export {protocol.ENV_KRB5_CONFIG}={shlex.quote(str(kdc.krb5_conf(lay)))}",
                f"export {protocol.ENV_CA_FILE}={shlex.quote(str(secure.ca_pem(lay)))}",
            ]
        return lines
