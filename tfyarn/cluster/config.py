"""Hadoop configuration files of the local cluster.

Pure functions from a layout and options to file contents, so the settings
can be tested and read in one place. Every setting carries the reason it is
there; Hadoop's defaults assume a tarball install and a roomy multi-host
cluster, and this cluster is one loopback node on a small machine.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from tfyarn import protocol
from tfyarn.cluster import secure
from tfyarn.cluster.layout import HOST, ClusterLayout
from tfyarn.nodegpus import GPU


@dataclass(frozen=True)
class ClusterOptions:
    """What a user may size on `tfyarn cluster up`."""

    memory_mb: int = 16384  # per node, as are vcores and gpus
    vcores: int = 16
    gpus: int = 4
    max_container_mb: int = 8192
    nodes: int | None = None  # None: as many as the cluster last ran (1 for a new one)
    # node -> its YARN node label; None: as the cluster last had them ({} for a new one)
    labels: dict[int, str] | None = None
    kerberos: bool = False  # set up a new cluster in secure mode; a Kerberized cluster stays so
    token_lifetime_s: int = 0  # secure mode: HDFS delegation tokens' max lifetime (0: Hadoop's 7 days)

    @property
    def label_names(self) -> tuple[str, ...]:
        """The cluster's node labels, each once, sorted."""
        return tuple(sorted(set((self.labels or {}).values())))


_CAPACITY_SCHEDULER = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler"
_DOMINANT_RESOURCES = "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"


def to_xml(props: dict[str, str]) -> str:
    """A Hadoop ``<configuration>`` document."""
    rows = "".join(
        f"  <property><name>{escape(k)}</name><value>{escape(str(v))}</value></property>\n" for k, v in props.items()
    )
    return f'<?xml version="1.0"?>\n<configuration>\n{rows}</configuration>\n'


def core_site(layout: ClusterLayout) -> dict[str, str]:
    user = getpass.getuser()
    return {
        "fs.defaultFS": layout.fs_uri,
        "hadoop.tmp.dir": str(layout.data_dir / "tmp"),
        f"hadoop.proxyuser.{user}.hosts": "*",
        f"hadoop.proxyuser.{user}.groups": "*",
        # One retry instead of Hadoop's ten keeps a client pointed at a
        # stopped cluster from hanging for minutes.
        "ipc.client.connect.max.retries": "1",
        "ipc.client.connect.max.retries.on.timeouts": "1",
    }


def hdfs_site(layout: ClusterLayout, nodes: int = 1) -> dict[str, str]:
    """HDFS of a cluster of ``nodes`` nodes, seen from ``layout``'s node: one DataNode per node."""
    p = layout.node_ports
    return {
        # Two copies once there are two DataNodes: a file survives one node going away.
        "dfs.replication": "2" if nodes >= 2 else "1",
        "dfs.namenode.name.dir": str(layout.for_node(1).data_dir / "namenode"),
        "dfs.datanode.data.dir": str(layout.data_dir / "datanode"),
        "dfs.namenode.rpc-address": f"{HOST}:{p.namenode_rpc}",
        "dfs.namenode.http-address": f"{HOST}:{p.namenode_http}",
        "dfs.namenode.secondary.http-address": f"{HOST}:0",
        "dfs.datanode.address": f"{layout.host}:{p.datanode_data}",
        "dfs.datanode.http.address": f"{layout.host}:{p.datanode_http}",
        "dfs.datanode.ipc.address": f"{layout.host}:{p.datanode_ipc}",
        # The NameNode records a DataNode under the address its RPCs come from, 127.0.0.1 for
        # every node on this machine; by name (its own 127.0.0.i) clients and DataNodes reach
        # the node itself. hdfs-native honours the client key too (0.14.1 and later).
        "dfs.datanode.hostname": layout.host,
        "dfs.client.use.datanode.hostname": "true",
        "dfs.datanode.use.datanode.hostname": "true",
        # Leave safe mode as soon as one DataNode reports, whatever share of the blocks it has:
        # a cluster brought up with fewer nodes than it had must still come up.
        "dfs.namenode.safemode.extension": "0",
        "dfs.namenode.safemode.min.datanodes": "1",
        "dfs.namenode.safemode.threshold-pct": "0",
        "dfs.heartbeat.interval": "1",
        # A silent DataNode is dead after 2 x 2.5 s + 10 heartbeats (default: 10.5 min), so a lost
        # node's copies are replaced, and no longer offered to writers, within a test's time.
        "dfs.namenode.heartbeat.recheck-interval": "2500",
        # Before that, one silent for 5 s is stale: readers try it last, and writers get it only
        # when the other nodes do not suffice. (hdfs-native's writer does not retry a pipeline
        # without a node that refused it, as Java's does; tfyarn's copies retry the file.)
        "dfs.namenode.stale.datanode.interval": "5000",
        "dfs.namenode.avoid.write.stale.datanode": "true",
        "dfs.namenode.avoid.read.stale.datanode": "true",
        "dfs.webhdfs.enabled": "true",
        "dfs.permissions.enabled": "true",
        "dfs.datanode.du.reserved": "0",
        "dfs.namenode.resource.du.reserved": "104857600",
    }


def yarn_site(layout: ClusterLayout, opts: ClusterOptions) -> dict[str, str]:
    p = layout.ports
    whitelist = ",".join(
        [
            "JAVA_HOME",
            "HADOOP_COMMON_HOME",
            "HADOOP_HDFS_HOME",
            protocol.ENV_HADOOP_CONF_DIR,
            "CLASSPATH_PREPEND_DISTCACHE",
            "HADOOP_YARN_HOME",
            "HADOOP_HOME",
            "PATH",
            "LANG",
            "TZ",
        ]
    )
    return {
        "yarn.resourcemanager.hostname": HOST,
        "yarn.resourcemanager.address": f"{HOST}:{p.rm_rpc}",
        "yarn.resourcemanager.scheduler.address": f"{HOST}:{p.rm_scheduler}",
        "yarn.resourcemanager.resource-tracker.address": f"{HOST}:{p.rm_tracker}",
        "yarn.resourcemanager.admin.address": f"{HOST}:{p.rm_admin}",
        "yarn.resourcemanager.webapp.address": f"{HOST}:{p.rm_http}",
        "yarn.resourcemanager.scheduler.class": _CAPACITY_SCHEDULER,
        # A client facing a stopped RM gives up after seconds, not 15 minutes.
        "yarn.resourcemanager.connect.max-wait.ms": "10000",
        "yarn.resourcemanager.connect.retry-interval.ms": "1000",
        # Faster node heartbeats make container allocation and launch snappier.
        "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms": "250",
        # The node's own address (127.0.0.i on node i): each node is a host of its own.
        "yarn.nodemanager.hostname": layout.host,
        "yarn.nodemanager.address": f"{layout.host}:{p.nm_rpc}",
        "yarn.nodemanager.localizer.address": f"{layout.host}:{p.nm_localizer}",
        "yarn.nodemanager.webapp.address": f"{layout.host}:{p.nm_http}",
        "yarn.nodemanager.local-dirs": str(layout.nm_local_dir),
        "yarn.nodemanager.log-dirs": str(layout.log_dir / "containers"),
        "yarn.nodemanager.resource.memory-mb": str(opts.memory_mb),
        "yarn.nodemanager.resource.cpu-vcores": str(opts.vcores),
        "yarn.nodemanager.vmem-check-enabled": "false",
        # A full-ish shared disk must not mark the only node UNHEALTHY.
        "yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage": "99.9",
        "yarn.nodemanager.disk-health-checker.min-free-space-per-disk-mb": "100",
        "yarn.nodemanager.env-whitelist": whitelist,
        "yarn.nodemanager.delete.debug-delay-sec": "600",
        # A NodeManager silent for 20 s is lost (YARN's default waits 10 min): jobs on a dead
        # node end in seconds, and the tests can stop one and watch.
        "yarn.nm.liveness-monitor.expiry-interval-ms": "20000",
        "yarn.scheduler.minimum-allocation-mb": "128",
        "yarn.scheduler.maximum-allocation-mb": str(opts.max_container_mb),
        "yarn.scheduler.maximum-allocation-vcores": str(opts.vcores),
        "yarn.log-aggregation-enable": "true",
        "yarn.nodemanager.remote-app-log-dir": "/tmp/logs",
        "yarn.log-aggregation.retain-seconds": "604800",
        # The default assumes $HADOOP_HOME's tarball layout; ours is one lib dir.
        "yarn.application.classpath": f"{layout.conf_dir},{layout.lib_dir}/*",
        "yarn.timeline-service.enabled": "false",
        "yarn.resourcemanager.recovery.enabled": "false",
        # Node labels (`cluster up --labels`), kept by the RM in node 1's data dir (default: /tmp).
        "yarn.node-labels.enabled": "true",
        "yarn.node-labels.fs-store.root-dir": f"file://{layout.for_node(1).data_dir / 'node-labels'}",
        "yarn.node-attribute.fs-store.root-dir": f"file://{layout.for_node(1).data_dir / 'node-attributes'}",
        "yarn.nodemanager.recovery.enabled": "false",
        **gpu_plugin(layout, opts),
    }


def gpu_plugin(layout: ClusterLayout, opts: ClusterOptions) -> dict[str, str]:
    """YARN's GPU plugin, discovering GPUs through a stand-in ``nvidia-smi``.

    The NodeManager then advertises ``opts.gpus`` GPUs with device numbers,
    memory and utilisation on its REST endpoint, as on a real GPU node.
    Under the DefaultContainerExecutor it schedules GPUs but assigns no
    device numbers to containers (that needs LinuxContainerExecutor and
    cgroups, whose native binary is not on Maven Central).
    """
    if opts.gpus == 0:
        return {}
    return {
        "yarn.nodemanager.resource-plugins": GPU,
        "yarn.nodemanager.resource-plugins.gpu.path-to-discovery-executables": str(nvidia_smi_path(layout)),
        "yarn.nodemanager.resource-plugins.gpu.allowed-gpu-devices": "auto",
    }


def nvidia_smi_path(layout: ClusterLayout) -> Path:
    """Kept off PATH: only the NodeManager's discovery calls it."""
    return layout.gpu_dir / "nvidia-smi"


def fake_nvidia_smi(gpus: int) -> str:
    """A stand-in ``nvidia-smi`` that answers ``-x -q`` with ``gpus`` idle devices."""
    devices = "".join(
        f'<gpu id="00000000:{i + 1:02X}:00.0"><product_name>tfyarn stand-in GPU</product_name>'
        f"<uuid>GPU-00000000-0000-0000-0000-{i:012d}</uuid><minor_number>{i}</minor_number>"
        "<fb_memory_usage><total>16384 MiB</total><used>0 MiB</used><free>16384 MiB</free></fb_memory_usage>"
        "<utilization><gpu_util>0 %</gpu_util></utilization>"
        "<temperature><gpu_temp>30 C</gpu_temp><gpu_temp_max_threshold>90 C</gpu_temp_max_threshold>"
        "<gpu_temp_slow_threshold>85 C</gpu_temp_slow_threshold></temperature></gpu>"
        for i in range(gpus)
    )
    xml = (
        f'<?xml version="1.0" ?><nvidia_smi_log><driver_version>0.0-tfyarn</driver_version>'
        f"<attached_gpus>{gpus}</attached_gpus>{devices}</nvidia_smi_log>"
    )
    head = f"#!/bin/sh\n# Written by `tfyarn cluster up`: {gpus} pretend GPUs for YARN's GPU discovery.\n"
    return f"{head}cat <<'XML'\n{xml}\nXML\n"


def capacity_scheduler(labels: tuple[str, ...] = ()) -> dict[str, str]:
    """Two queues, so queue selection is testable; room for several AMs.

    Each node label's nodes belong to queue ``default`` alone, as labelled
    (GPU) nodes often belong to one team; ``research`` may not ask for a
    label, though unlabelled containers of either queue still use the nodes'
    idle room (the labels are non-exclusive). The RM accepts labels here that
    it does not know yet; `up` adds them right after it starts.
    """
    root = "yarn.scheduler.capacity.root"
    by_label: dict[str, str] = {}
    for label in labels:
        by_label[f"{root}.accessible-node-labels.{label}.capacity"] = "100"
        by_label[f"{root}.default.accessible-node-labels.{label}.capacity"] = "100"
        by_label[f"{root}.default.accessible-node-labels.{label}.maximum-capacity"] = "100"
    if labels:
        by_label[f"{root}.default.accessible-node-labels"] = ",".join(labels)
        by_label[f"{root}.research.accessible-node-labels"] = " "  # none (empty would inherit root's *)
    return by_label | {
        f"{root}.queues": "default,research",
        f"{root}.default.capacity": "70",
        f"{root}.default.maximum-capacity": "100",
        f"{root}.research.capacity": "30",
        f"{root}.research.maximum-capacity": "100",
        # One user may fill a queue up to its maximum capacity (the factor's default, 1, stops
        # them at the queue's share: 5 of 2 nodes' 8 GPUs, and then every AM of theirs waits).
        f"{root}.default.user-limit-factor": "2",
        f"{root}.research.user-limit-factor": "4",
        "yarn.scheduler.capacity.maximum-am-resource-percent": "0.5",
        # Required for GPUs to count in scheduling decisions.
        "yarn.scheduler.capacity.resource-calculator": _DOMINANT_RESOURCES,
        "yarn.scheduler.capacity.node-locality-delay": "-1",
        # Where YARN enforces ACLs (a Kerberized cluster), a queue's administrators may kill any
        # application in it; the root queue's default ("*") would make every user one.
        f"{root}.acl_administer_queue": "yarn",
        f"{root}.default.acl_submit_applications": "*",
        f"{root}.research.acl_submit_applications": "*",
    }


def resource_types() -> dict[str, str]:
    """Declares the GPU resource type; also read by clients (skein refuses gpus>0 without it)."""
    return {"yarn.resource-types": GPU}


LOG4J = """\
# Daemons log to a rolling file; client commands log warnings to stderr.
hadoop.root.logger=WARN,console
hadoop.log.dir=.
hadoop.log.file=hadoop.log
log4j.rootLogger=${hadoop.root.logger}
log4j.threshold=ALL
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{yy/MM/dd HH:mm:ss} %p %c{2}: %m%n
log4j.appender.RFA=org.apache.log4j.RollingFileAppender
log4j.appender.RFA.File=${hadoop.log.dir}/${hadoop.log.file}
log4j.appender.RFA.MaxFileSize=32MB
log4j.appender.RFA.MaxBackupIndex=2
log4j.appender.RFA.layout=org.apache.log4j.PatternLayout
log4j.appender.RFA.layout.ConversionPattern=%d{ISO8601} %p %c: %m%n
log4j.logger.org.apache.hadoop.util.NativeCodeLoader=ERROR
"""


def config_files(layout: ClusterLayout, opts: ClusterOptions) -> dict[Path, str]:
    """Every file of the cluster's HADOOP_CONF_DIR, by path; secure mode's too on a Kerberized cluster."""
    c = layout.conf_dir
    files = {nvidia_smi_path(layout): fake_nvidia_smi(opts.gpus)} if opts.gpus else {}
    core, hdfs, yarn = core_site(layout), hdfs_site(layout, opts.nodes or 1), yarn_site(layout, opts)
    if layout.kerberized:
        core, hdfs = core | secure.core_site(layout), hdfs | secure.hdfs_site(layout, opts.token_lifetime_s)
        yarn = yarn | secure.yarn_site(layout)
        files |= {path: to_xml(props) for path, props in secure.ssl_files(layout).items()}
    return files | {
        c / "core-site.xml": to_xml(core),
        c / "hdfs-site.xml": to_xml(hdfs),
        c / "yarn-site.xml": to_xml(yarn),
        c / "capacity-scheduler.xml": to_xml(capacity_scheduler(opts.label_names)),
        c / "resource-types.xml": to_xml(resource_types()),
        c / "log4j.properties": LOG4J,
    }
