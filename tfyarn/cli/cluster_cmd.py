"""``tfyarn cluster up | down | status | env``."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import click

from tfyarn import protocol
from tfyarn.cli.params import memory_text
from tfyarn.cluster import ClusterLayout, ClusterOptions, ClusterStatus, LocalCluster, historyd, labels
from tfyarn.cluster.layout import DEFAULT_CLUSTER_DIR, MAX_NODES, default_cluster_dir
from tfyarn.cluster.local import UP_TIMEOUT_S
from tfyarn.cluster.nodestatus import describe
from tfyarn.errors import ClusterError, SpecError
from tfyarn.nodegpus import GPU
from tfyarn.spec import parse_memory


def _progress(msg: str) -> None:
    click.echo(msg, err=True)


def _cluster(ctx: click.Context, options: ClusterOptions | None = None) -> LocalCluster:
    return LocalCluster(ClusterLayout(root=ctx.obj["dir"]), options)


@click.group()
@click.option(
    "--dir",
    "root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    envvar=protocol.ENV_CLUSTER_DIR,
    show_envvar=True,
    help=f"Cluster dir (config, data, logs). [default: {DEFAULT_CLUSTER_DIR}]",
)
@click.pass_context
def cluster(ctx: click.Context, root: Path | None) -> None:
    """Run a real Hadoop 3.5 cluster (HDFS + YARN) on this machine: one node, or several.

    \b
    The Hadoop jars come from Maven Central on the first `up` and are cached
    (~/.cache/tfyarn, override with TFYARN_JAR_CACHE). Every daemon listens
    on loopback only: node 1 on 127.0.0.1, node i on 127.0.0.i.
    HDFS data survives `down`; `down --purge` deletes it.
    Extra JVM flags for its client commands (bin/yarn, hdfs, hadoop):
    TFYARN_CLIENT_OPTS.
    """
    ctx.obj = {"dir": (root or default_cluster_dir()).expanduser().absolute()}


@cluster.command()
@click.option(
    "--nodes",
    type=click.IntRange(1, MAX_NODES),
    default=None,
    help="How many nodes (NodeManagers) to run: node 1 on 127.0.0.1 with the master daemons, node i on "
    "127.0.0.i with its own dirs under <dir>/nodes/<i>/ and its own /tmp. Fewer than run now stops the "
    "extra ones. The cluster remembers it.  [default: as many as the cluster last ran; 1 for a new one]",
)
@click.option(
    "--gpus",
    type=click.IntRange(min=0),
    default=ClusterOptions.gpus,
    show_default=True,
    help=f"GPUs each NodeManager advertises as {GPU} (scheduled even without real GPUs).",
)
@click.option(
    "--memory",
    default=memory_text(ClusterOptions.memory_mb),
    show_default=True,
    help="Memory each NodeManager offers to containers; the largest container gets at most "
    f"{memory_text(ClusterOptions.max_container_mb)} of it.",
)
@click.option(
    "--vcores",
    type=click.IntRange(min=1),
    default=ClusterOptions.vcores,
    show_default=True,
    help="Virtual cores each NodeManager offers.",
)
@click.option(
    "--labels",
    "labels_text",
    metavar="NODE=LABEL,...|none",
    default=None,
    help="YARN node labels, e.g. 2=gpu: node 2 carries label gpu (non-exclusive: it still runs "
    "unlabelled containers when it has room), and a job's --node-label gpu runs there only. Queue "
    "default has each label's nodes (research may not ask for one). `none` removes them. The cluster remembers it.  "
    "[default: as the cluster last had them; none for a new one]",
)
@click.option(
    "--kerberos",
    is_flag=True,
    help="Secure mode: a KDC of the cluster's own (MIT krb5kdc on 127.0.0.1:10088, realm TFYARN.LOCAL), "
    "Kerberos on every daemon, SASL DataNode transfer with HTTPS web endpoints, SPNEGO on every web UI, "
    "YARN ACLs, and user principals alice and bob with keytabs in <dir>/kerberos/keytabs. Only for a new "
    "cluster dir; the cluster remembers it. Needs Debian's krb5-kdc, krb5-admin-server and krb5-user.",
)
@click.option(
    "--token-lifetime",
    type=click.IntRange(min=150),
    default=None,
    metavar="SECONDS",
    help="With --kerberos: the max lifetime of HDFS delegation tokens (renewable every half of it), to try "
    "out jobs that outlive their tokens (submitted with --principal/--keytab, their AM renews them). At least 150: "
    "HDFS clients pass over a token in its last minute.  "
    "[default: Hadoop's 7 days]",
)
@click.option(
    "--timeout",
    type=click.IntRange(min=10),
    default=UP_TIMEOUT_S,
    show_default=True,
    help="Seconds to wait for the daemons.",
)
@click.pass_context
def up(
    ctx: click.Context,
    nodes: int | None,
    gpus: int,
    memory: str,
    vcores: int,
    labels_text: str | None,
    kerberos: bool,
    token_lifetime: int | None,
    timeout: int,
) -> None:
    """Start NameNode, DataNode, ResourceManager and a NodeManager per node; wait until usable.

    Idempotent: daemons already running are left as they are (a running
    node keeps the --gpus, --memory and --vcores it started with). Each
    node runs a DataNode; files have two copies once there are two nodes.
    """
    try:
        memory_mb = parse_memory(memory, "--memory")
    except SpecError as e:
        raise click.BadParameter(str(e).split(": ", 1)[1], param_hint="--memory") from None
    try:
        node_labels = None if labels_text is None else labels.parse(labels_text, MAX_NODES)
    except ClusterError as e:
        raise click.BadParameter(str(e).split(": ", 1)[1], param_hint="--labels") from None
    opts = ClusterOptions(
        memory_mb=memory_mb,
        vcores=vcores,
        gpus=gpus,
        max_container_mb=min(ClusterOptions.max_container_mb, memory_mb),
        nodes=nodes,
        labels=node_labels,
        kerberos=kerberos,
        token_lifetime_s=token_lifetime or 0,
    )
    c = _cluster(ctx, opts)
    if token_lifetime and not (kerberos or c.layout.kerberized):
        raise click.UsageError("--token-lifetime goes with --kerberos: a cluster without Kerberos has no tokens")
    st = c.up(_progress, timeout_s=timeout)
    _print_status(st)
    click.echo('\nUse it from a shell:  eval "$(tfyarn cluster env)"')


@cluster.command()
@click.option(
    "--purge",
    is_flag=True,
    help="Also delete the cluster dir (HDFS data, logs, config); only a dir that `up` marked "
    "as a cluster dir (.tfyarn-cluster).",
)
@click.pass_context
def down(ctx: click.Context, purge: bool) -> None:
    """Stop every daemon of every node (and any container process) of the local cluster."""
    _cluster(ctx).down(_progress, purge=purge)


@cluster.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show which daemons run, their web UIs, HDFS and each node as the ResourceManager sees it.

    Exit 1 unless every daemon and every node's NodeManager runs.
    """
    st = _cluster(ctx).status()
    if as_json:
        click.echo(json.dumps(asdict(st), indent=2))
    else:
        _print_status(st)
    ctx.exit(0 if st.running else 1)


@cluster.command()
@click.pass_context
def env(ctx: click.Context) -> None:
    """Print export lines for a shell: eval "$(tfyarn cluster env)"."""
    for line in _cluster(ctx).env_lines():
        click.echo(line)


def _print_status(st: ClusterStatus) -> None:
    click.echo(f"Cluster dir: {st.root}")
    for d in st.daemons:
        state = f"running (pid {d.pid})" if d.pid else "stopped"
        web = f"  {d.web}" if d.web else ""
        click.echo(f"  {d.name:<16} {state:<22}{web}")
    if st.skein_driver_pid:
        click.echo(f"  {'skein driver':<16} {f'running (pid {st.skein_driver_pid})':<22}  reused by tfyarn's commands")
    if st.history_pid:
        click.echo(f"  {'history page':<16} {f'running (pid {st.history_pid})':<22}  {historyd.url()}")
    if st.hdfs_safemode is not None:
        click.echo(f"HDFS: {'in safe mode' if st.hdfs_safemode else 'ready'}, {st.live_datanodes} live DataNode(s)")
    if st.running_nodemanagers is not None:
        click.echo(
            f"YARN: {st.running_nodemanagers} RUNNING NodeManager(s), {st.gpus_total} GPU(s) advertised; "
            f"ResourceManager UI at {next(d.web for d in st.daemons if d.name == 'resourcemanager')}"
        )
    click.echo(f"Nodes ({st.node_count} configured):")
    for n in st.nodes:
        click.echo(describe(n))
