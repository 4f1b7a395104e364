"""Node labels of a local cluster (`cluster up --labels 2=gpu`): parsed, remembered, given to the RM.

YARN keeps a cluster's labels in the ResourceManager (its store is in node
1's data dir), and which node carries which in the same place; the queues'
share of each label's partition is capacity-scheduler.xml's (config.py).
`up` makes the RM's labels what was asked: labels are added, non-exclusive
(a labelled node still runs unlabelled containers when it has room), each
node gets its label or none, and labels nobody carries are removed. All
through the RM's REST API; only a change of the queues' labels on a running
RM costs a `yarn rmadmin -refreshQueues`.
"""

from __future__ import annotations

import getpass
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tfyarn.cluster.layout import MAX_NODES, ClusterLayout
from tfyarn.errors import ClusterError
from tfyarn.rest import FetchError, Unreadable, get, parse_json

Progress = Callable[[str], None]
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,254}")  # YARN's rule for a label name
NONE = "none"


def parse(text: str, nodes: int) -> dict[int, str]:
    """``2=gpu,3=gpu`` (or ``none``) as node -> label; ClusterError naming what is wrong."""
    if text.strip() == NONE:
        return {}
    out: dict[int, str] = {}
    for item in filter(None, (i.strip() for i in text.split(","))):
        node, sep, label = item.partition("=")
        if not sep or not node.strip().isdigit():
            raise ClusterError(f"--labels: {item!r} is not NODE=LABEL (e.g. 2=gpu), nor `{NONE}`")
        n, label = int(node), label.strip()
        if not 1 <= n <= nodes:
            raise ClusterError(f"--labels: node {n} is not one of the cluster's nodes 1..{nodes}")
        if not _LABEL.fullmatch(label):
            raise ClusterError(
                f"--labels: {label!r} is not a YARN label name (letters, digits, '-' and '_', not first)"
            )
        if n in out and out[n] != label:
            raise ClusterError(f"--labels: node {n} is given two labels ({out[n]}, {label}); YARN allows one")
        out[n] = label
    return out


def text(labels: dict[int, str]) -> str:
    """The inverse of ``parse``."""
    return ",".join(f"{n}={label}" for n, label in sorted(labels.items())) or NONE


def _file(layout: ClusterLayout) -> Path:
    return layout.nodes_dir / "labels"


def remembered(layout: ClusterLayout) -> dict[int, str]:
    """The labels the last `up` asked for: none for a new cluster (or an unreadable file)."""
    try:
        return parse(_file(layout).read_text(), MAX_NODES)
    except (OSError, ClusterError):
        return {}


def remember(layout: ClusterLayout, labels: dict[int, str]) -> None:
    _file(layout).parent.mkdir(parents=True, exist_ok=True)
    _file(layout).write_text(text(labels) + "\n")


def _call(layout: ClusterLayout, path: str, method: str = "GET", body: Any = None) -> Any:
    """One call to the RM's REST API, as the cluster's user (yarn.admin.acl lets anyone administer)."""
    sep = "&" if "?" in path else "?"
    url = f"{layout.rm_web}/ws/v1/cluster/{path}{sep}user.name={getpass.getuser()}"
    try:
        raw = get(url, method=method, body=body, timeout=15)
        return parse_json(raw) if raw.strip() else None
    except (FetchError, Unreadable) as e:
        raise ClusterError(f"the ResourceManager refused {method} {path.split('?')[0]}: {e}") from None


def cluster_labels(layout: ClusterLayout) -> set[str]:
    """The labels the RM knows."""
    infos = ((_call(layout, "get-node-labels") or {}).get("nodeLabelInfo")) or []
    return {str(i.get("name")) for i in ([infos] if isinstance(infos, dict) else infos)}


def node_labels(layout: ClusterLayout) -> dict[str, set[str]]:
    """Each node id the RM knows (``host:port``) -> its labels."""
    nodes = ((_call(layout, "nodes") or {}).get("nodes") or {}).get("node") or []
    return {str(n["id"]): set(n.get("nodeLabels") or []) for n in nodes}


def refresh_queues(layout: ClusterLayout) -> None:
    """Make a running RM read capacity-scheduler.xml again."""
    cmd = [str(layout.bin_dir / "yarn"), "rmadmin", "-refreshQueues"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        raise ClusterError(f"`yarn rmadmin -refreshQueues` failed: {tail[0]}")


def queue_labels(layout: ClusterLayout) -> set[str]:
    """The labels the RM's queues may use now (``*``: any), from its scheduler answer."""
    info = ((_call(layout, "scheduler") or {}).get("scheduler") or {}).get("schedulerInfo") or {}
    queues = (info.get("queues") or {}).get("queue") or []
    return {str(label) for q in queues for label in (q.get("nodeLabels") or [])}


def apply(
    layout: ClusterLayout,
    want: dict[int, str],
    hosts: dict[int, str],
    progress: Progress,
    write_queues: Callable[[], None],
) -> None:
    """Make the RM's labels ``want`` (node number -> label); ``hosts``: node number -> its RM node id.

    Labels are added before the queues are told of them (``write_queues``
    rewrites capacity-scheduler.xml) and removed after, as YARN requires.
    """
    names = set(want.values())
    missing = names - cluster_labels(layout)
    if missing:
        body = {"nodeLabelInfo": [{"name": n, "exclusivity": False} for n in sorted(missing)]}
        _call(layout, "add-node-labels", "POST", body)
        progress(f"Added node label(s) {', '.join(sorted(missing))} to the cluster (non-exclusive).")
    current = node_labels(layout)
    for n, node_id in sorted(hosts.items()):
        label = want.get(n)
        if current.get(node_id, set()) != ({label} if label else set()):
            _call(layout, f"nodes/{node_id}/replace-labels" + (f"?labels={label}" if label else ""), "POST")
            progress(f"node {n} ({node_id}): label {label or 'removed'}.")
    if queue_labels(layout) != (names or {"*"}):
        write_queues()
        refresh_queues(layout)
        progress(f"The queues now know the label(s): {', '.join(sorted(names)) or 'none'} (capacity-scheduler.xml).")
    unused = cluster_labels(layout) - names
    if unused:
        _call(layout, "remove-node-labels?labels=" + ",".join(sorted(unused)), "POST")
        progress(f"Removed node label(s) {', '.join(sorted(unused))}: no node carries them now.")
