"""A second YARN for the HA test: two ResourceManagers with ZooKeeper, one NodeManager, the suite's HDFS.

Shaped like a production HA config: ``yarn.resourcemanager.ha.rm-ids rm1,rm2``
with per-id addresses only (no plain ``yarn.resourcemanager.address``),
automatic failover through ZooKeeper's leader election, and the RM state in
ZooKeeper (work-preserving recovery), so a new active RM takes over the
running apps. rm1 listens on 127.0.0.1, rm2 on 127.0.0.2, both on ports
180xx; ZooKeeper (from the cached jars) on 127.0.0.1:12181. Each daemon is
a plain ``java`` with an explicit -Xmx, started and killed by this module.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tfyarn.cluster import config, daemons
from tfyarn.cluster.config import ClusterOptions
from tfyarn.cluster.daemons import Daemon
from tfyarn.cluster.layout import ClusterLayout, Ports

ZK_PORT = 12181
RM_HOSTS = {"rm1": "127.0.0.1", "rm2": "127.0.0.2"}
PORTS = Ports(rm_rpc=18032, rm_scheduler=18030, rm_tracker=18031, rm_admin=18033, rm_http=18088,
              nm_rpc=18041, nm_localizer=18040, nm_http=18042)
RM = Daemon("resourcemanager", daemons.RESOURCEMANAGER.main_class, "512m", "rm_rpc")
NM = Daemon("nodemanager", daemons.NODEMANAGER.main_class, "384m", "nm_rpc")
ZK_MAIN = "org.apache.zookeeper.server.ZooKeeperServerMain"


def ha_yarn_site(client: ClusterLayout, rm_id: str | None) -> dict[str, str]:
    """The HA yarn-site: the NodeManager's and the client's (rm_id None), or RM ``rm_id``'s own."""
    site = config.yarn_site(client, ClusterOptions(gpus=0, memory_mb=8192, vcores=8))
    for key in [k for k in site if k.startswith("yarn.resourcemanager.") and k.endswith(("address", "hostname"))]:
        del site[key]
    site |= {
        "yarn.resourcemanager.ha.enabled": "true",
        "yarn.resourcemanager.ha.rm-ids": ",".join(RM_HOSTS),
        "yarn.resourcemanager.cluster-id": "tfyarn-ha-test",
        "yarn.resourcemanager.ha.automatic-failover.enabled": "true",
        "hadoop.zk.address": f"127.0.0.1:{ZK_PORT}",
        "yarn.resourcemanager.zk-address": f"127.0.0.1:{ZK_PORT}",  # the embedded elector's check reads this
        "yarn.resourcemanager.zk-timeout-ms": "6000",
        "yarn.resourcemanager.recovery.enabled": "true",
        "yarn.resourcemanager.store.class":
            "org.apache.hadoop.yarn.server.resourcemanager.recovery.ZKRMStateStore",
        "yarn.resourcemanager.work-preserving-recovery.enabled": "true",
        # Clients and AMs: try the other RM soon, and keep trying through a failover.
        "yarn.client.failover-sleep-base-ms": "500",
        "yarn.client.failover-sleep-max-ms": "2000",
        "yarn.client.failover-max-attempts": "60",
        "yarn.resourcemanager.connect.max-wait.ms": "90000",
    }
    for rid, host in RM_HOSTS.items():
        p = PORTS
        site |= {
            f"yarn.resourcemanager.hostname.{rid}": host,
            f"yarn.resourcemanager.address.{rid}": f"{host}:{p.rm_rpc}",
            f"yarn.resourcemanager.scheduler.address.{rid}": f"{host}:{p.rm_scheduler}",
            f"yarn.resourcemanager.resource-tracker.address.{rid}": f"{host}:{p.rm_tracker}",
            f"yarn.resourcemanager.admin.address.{rid}": f"{host}:{p.rm_admin}",
            f"yarn.resourcemanager.webapp.address.{rid}": f"{host}:{p.rm_http}",
        }
    if rm_id:
        site["yarn.resourcemanager.ha.id"] = rm_id
    return site


@dataclass
class HaYarn:
    """The daemons of the HA YARN under ``root``; ``client_conf`` is the HADOOP_CONF_DIR users get."""

    root: Path
    jar_cache: Path
    hdfs_conf: Path  # the suite cluster's conf dir: its core-site names the HDFS both share
    bin_dir: Path  # the suite cluster's bin/: `yarn` for skein
    pids: dict[str, int] = field(default_factory=dict)

    def layout(self, name: str) -> ClusterLayout:
        return ClusterLayout(root=self.root / name, jar_cache=self.jar_cache, ports=PORTS)

    @property
    def client_conf(self) -> Path:
        return self.layout("nm").conf_dir

    def write(self) -> None:
        for name, rm_id in (("nm", None), *((r, r) for r in RM_HOSTS)):
            conf = self.layout(name).conf_dir
            conf.mkdir(parents=True, exist_ok=True)
            for f in ("core-site.xml", "hdfs-site.xml", "capacity-scheduler.xml", "resource-types.xml",
                      "log4j.properties"):
                (conf / f).write_text((self.hdfs_conf / f).read_text())
            (conf / "yarn-site.xml").write_text(config.to_xml(ha_yarn_site(self.layout("nm"), rm_id)))
        zk = self.root / "zk"
        (zk / "data").mkdir(parents=True, exist_ok=True)
        (zk / "zoo.cfg").write_text(
            f"dataDir={zk / 'data'}\nclientPort={ZK_PORT}\nclientPortAddress=127.0.0.1\n"
            "tickTime=1000\nadmin.enableServer=false\n4lw.commands.whitelist=ruok\n"
        )

    def env(self, name: str) -> dict[str, str]:
        env = daemons.daemon_env(self.layout(name))
        env["PATH"] = f"{self.bin_dir}:{env['PATH']}"
        return env

    def _spawn(self, name: str, argv: list[str], env: dict[str, str], log: Path) -> None:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True, cwd=self.root)
        self.pids[name] = proc.pid

    def start(self) -> None:
        self.write()
        java = str(daemons.java_home() / "bin" / "java")
        zk = self.root / "zk"
        self._spawn("zk", [java, "-Xmx128m", f"-Dzookeeper.log.dir={zk}", "-cp", f"{self.jar_cache}/lib/*",
                           ZK_MAIN, str(zk / "zoo.cfg")], dict(os.environ), zk / "zk.out")
        wait_port("127.0.0.1", ZK_PORT, 60, "ZooKeeper")
        for rid in RM_HOSTS:
            lay = self.layout(rid)
            self._spawn(rid, daemons.java_command(lay, RM), self.env(rid), lay.log_dir / "rm.out")
        lay = self.layout("nm")
        self._spawn("nm", daemons.java_command(lay, NM), self.env("nm"), lay.log_dir / "nm.out")

    def kill(self, name: str) -> None:
        """SIGKILL a daemon's whole session (the JVM and anything it forked)."""
        pid = self.pids.pop(name, None)
        if pid:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        for name in list(self.pids):
            self.kill(name)
        daemons.stop_strays(self.layout("nm"), grace_s=2.0)

    def log_tail(self, name: str, chars: int = 4000) -> str:
        logs = sorted((self.root / name).rglob("*.log")) + sorted((self.root / name).rglob("*.out"))
        return "\n".join(f"== {p}\n{p.read_text(errors='replace')[-chars:]}" for p in logs)


def wait_port(host: str, port: int, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not daemons.port_open(port, host):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not open {host}:{port} in {timeout_s:.0f} s")
        time.sleep(0.5)
