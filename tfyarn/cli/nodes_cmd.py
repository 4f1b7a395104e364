"""``tfyarn nodes``: every node of the ResourceManager, its health, and the tfyarn tasks on it now.

The nodes come from the RM's REST API (tfyarn.rmnodes, every state); the
tasks from each running tfyarn job's status document (its AM's
``tasks[].host``), matched by the RM's name of the node (its id's host
part, e.g. ``localhost`` for 127.0.0.1). ``merge`` and ``render`` are pure.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

import click

from tfyarn.rmnodes import NodeCapacity
from tfyarn.status import JobReport, TaskState
from tfyarn.wire import StatusDoc

if TYPE_CHECKING:
    from tfyarn.client import Client

# States an operator must look at: the node takes no containers, yet did not leave on purpose.
FLAGGED = {
    "LOST": "the ResourceManager has not heard from its NodeManager; its containers are gone",
    "UNHEALTHY": "its NodeManager's health check failed; it takes no new containers",
}
UNKNOWN = "UNKNOWN"  # a task's host that the ResourceManager does not list


@dataclass(frozen=True)
class NodeTask:
    """A tfyarn task running on a node now."""

    app_id: str
    job_name: str
    task: str  # role:index
    gpus: tuple[int, ...] = ()  # the devices it is bound to


@dataclass
class NodeView:
    """One node as `tfyarn nodes` shows it (the fields of ``--json``)."""

    host: str  # the RM's name of the node, as tasks[].host names it
    node_id: str  # host:port of its NodeManager
    state: str  # RUNNING, LOST, UNHEALTHY, DECOMMISSIONED, SHUTDOWN, ... (UNKNOWN: not listed by the RM)
    health_report: str = ""  # the RM's healthReport ("" while healthy)
    last_health_update_ms: int = 0  # the RM's lastHealthUpdate, ms since the epoch (0: never)
    memory_mb: int = 0
    memory_used_mb: int = 0
    vcores: int = 0
    vcores_used: int = 0
    gpus: int = 0
    gpus_used: int = 0
    containers: int = 0  # every application's, tfyarn AMs included
    tasks: list[NodeTask] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # its YARN node labels (--node-label)

    @classmethod
    def of(cls, n: NodeCapacity) -> NodeView:
        return cls(
            n.host,
            n.node_id,
            n.state or UNKNOWN,
            n.health_report,
            n.last_health_update_ms,
            n.memory_mb,
            n.used_memory_mb,
            n.vcores,
            n.used_vcores,
            n.gpus,
            n.used_gpus,
            n.containers,
            labels=list(n.labels),
        )


def running_tasks(rep: JobReport, doc: StatusDoc) -> list[tuple[str, NodeTask]]:
    """(host, task) of each of the job's tasks that runs in a container now."""
    return [
        (t.host, NodeTask(rep.app_id, rep.name or doc.name, t.name, tuple(t.gpus)))
        for t in doc.tasks
        if t.state == TaskState.RUNNING and t.host
    ]


def merge(nodes: list[NodeCapacity], jobs: list[tuple[JobReport, StatusDoc]]) -> list[NodeView]:
    """The RM's nodes in its order, each with the tasks on it; a task on a host the RM does not
    list gets a node of state UNKNOWN at the end, so no task goes unshown."""
    views = [NodeView.of(n) for n in nodes]
    by_host: dict[str, NodeView] = {}
    for v in views:  # a host the RM lists twice (an old LOST record, a new one): tasks go to a RUNNING one
        if v.host not in by_host or (v.state == "RUNNING" and by_host[v.host].state != "RUNNING"):
            by_host[v.host] = v
    for rep, doc in jobs:
        for host, task in running_tasks(rep, doc):
            if host not in by_host:
                by_host[host] = NodeView(host, host, UNKNOWN)
                views.append(by_host[host])
            by_host[host].tasks.append(task)
    return views


def to_json(views: list[NodeView]) -> str:
    return json.dumps([asdict(v) for v in views], indent=2)


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S") if ms > 0 else "never"


def _health(v: NodeView) -> str:
    if v.state == UNKNOWN:
        return "not listed by the ResourceManager"
    said = f"unhealthy: {v.health_report}" if v.health_report else "healthy"
    return f"{said} (reported {_when(v.last_health_update_ms)})"


def render(views: list[NodeView]) -> list[str]:
    """One line per node, its flag (LOST, UNHEALTHY) and tasks indented under it."""
    if not views:
        return ["The ResourceManager lists no nodes."]
    width = max(16, *(len(v.host) + 2 for v in views))
    lines = [f"{'NODE':<{width}}{'STATE':<16}{'MEMORY MB':<14}{'VCORES':<9}{'GPUS':<7}{'CONTAINERS':<12}HEALTH"]
    for v in views:
        state = f"!! {v.state}" if v.state in FLAGGED else v.state
        lines.append(
            f"{v.host:<{width}}{state:<16}{f'{v.memory_used_mb}/{v.memory_mb}':<14}"
            f"{f'{v.vcores_used}/{v.vcores}':<9}{f'{v.gpus_used}/{v.gpus}':<7}{v.containers:<12}{_health(v)}"
        )
        if v.labels:
            lines.append(f"  label: {', '.join(v.labels)} (submit --node-label {v.labels[0]} to run there)")
        if v.state in FLAGGED:
            lines.append(f"  !! {v.state}: {FLAGGED[v.state]}")
        for t in v.tasks:
            gpus = f"GPUs {','.join(str(g) for g in t.gpus)}" if t.gpus else "no GPUs"
            lines.append(f"  {t.app_id:<32}{t.job_name[:23]:<24}{t.task:<12}{gpus}")
    flagged = sum(v.state in FLAGGED for v in views)
    if flagged:
        lines.append(f"{flagged} node(s) LOST or UNHEALTHY: see `yarn node -list -all` and the NodeManagers' logs")
    return lines


def running_jobs(client: Client) -> list[tuple[JobReport, StatusDoc]]:
    """Each running tfyarn job with its AM's status document (jobs whose AM serves none yet: said on stderr)."""
    out = []
    for rep in client.list_jobs():
        if rep.state.is_terminal():
            continue
        doc = client.live_doc(rep)  # a job that ended meanwhile has none: its tasks are not running
        if doc is None:
            click.echo(f"Note: {rep.app_id} ({rep.state.value}): its AM has published no tasks yet", err=True)
        else:
            out.append((rep, doc))
    return out


def cluster_nodes(client: Client) -> list[NodeCapacity]:
    from tfyarn import hadoop_env, rmnodes
    from tfyarn.errors import TfyarnError, UnreachableError

    url = hadoop_env.rm_web(client.hadoop.conf_dir)
    try:
        return rmnodes.get_nodes(url, timeout=10.0, all_states=True)
    except rmnodes.FetchError as e:
        raise UnreachableError(f"cannot read the nodes from the ResourceManager's REST API at {url} ({e})") from None
    except rmnodes.Unreadable as e:
        raise TfyarnError(f"cannot read the ResourceManager's answer at {url}{rmnodes.NODES_PATH}: {e}") from None


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print a list of node objects, each with a `tasks` list.")
def nodes(as_json: bool) -> None:
    """Which node holds which task, which nodes are unhealthy or lost: every node of YARN's ResourceManager.

    \b
    Per node, as the ResourceManager sees it: state (RUNNING, LOST, UNHEALTHY,
    DECOMMISSIONED, SHUTDOWN, ...), its health report and when the RM last
    heard it, memory/vcores/GPUs used of total, containers; then, indented,
    each tfyarn task running there now: job id, job name, task, bound GPUs.
    LOST and UNHEALTHY nodes are marked `!!`. Works on any YARN cluster
    (HADOOP_CONF_DIR); node names are the RM's (`tfyarn status` HOST column).
    """
    from tfyarn.client import Client

    with Client() as client:
        rm_nodes = cluster_nodes(client)
        jobs = running_jobs(client)
    views = merge(rm_nodes, jobs)
    click.echo(to_json(views) if as_json else "\n".join(render(views)))
