"""What ``python_env: auto`` (the default) means for one submit: this interpreter, or this environment shipped.

The choice users expect: a job just works, on the local cluster and on a
cluster whose nodes have never seen this machine's Python. So:

- ``local`` when the target is the local cluster and each of its
  NodeManagers sees this interpreter, its environment and tfyarn at the same
  paths (checked through ``/proc/<pid>/root``, so a node with a /tmp of its
  own, or a client in a mount namespace of its own, is told apart);
- else ``packed``: this virtualenv or conda env, shipped through HDFS
  (tfyarn.pyenv), when it can be packed;
- else ``local`` again, with a warning that names what every node needs.

Reads local files and /proc only; touches no cluster, so ``--dry-run`` can say it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from tfyarn.errors import SpecError

AUTO = "auto"


@dataclass(frozen=True)
class EnvChoice:
    python_env: str  # "local" or "packed"
    reason: str  # one clause: why
    warning: str = ""  # said at submit when the containers may not find this interpreter

    def line(self) -> str:
        """How ``auto`` resolved, in one line."""
        return f"python_env auto: {self.python_env} ({self.reason})"


def needed_paths() -> list[str]:
    """What a container running this interpreter as ``local`` must see at the same path."""
    import appmaster
    import tfyarn

    paths = [
        os.path.realpath(sys.executable),
        sys.prefix,
        sys.base_prefix,
        os.path.dirname(os.path.realpath(tfyarn.__file__)),
        os.path.dirname(os.path.realpath(appmaster.__file__)),
    ]
    return list(dict.fromkeys(paths))


def unseen(pid: int, paths: list[str]) -> str | None:
    """The first of ``paths`` that process ``pid`` does not see as this process does, or None if it sees all."""
    for path in paths:
        try:
            mine = os.stat(path)
        except OSError:
            continue  # nothing here to compare
        try:
            theirs = os.stat(f"/proc/{pid}/root{path}")
        except OSError:
            return path
        if (mine.st_dev, mine.st_ino) != (theirs.st_dev, theirs.st_ino):
            return path
    return None


def local_nodemanagers(conf_dir: Path | None) -> dict[int, int] | None:
    """``{node: NodeManager pid}`` of the local cluster when ``conf_dir`` is its config, else None."""
    from tfyarn.cluster.daemons import NODEMANAGER, running_pid
    from tfyarn.cluster.layout import MAX_NODES, ClusterLayout

    layout = ClusterLayout()
    if conf_dir is None or conf_dir.resolve() != layout.conf_dir.resolve():
        return None
    pids = {}
    for node in range(1, MAX_NODES + 1):
        pid = running_pid(layout.for_node(node), NODEMANAGER)
        if pid is not None:
            pids[node] = pid
    return pids


def pack_problem() -> str | None:
    """Why this environment cannot be shipped as ``packed``, or None when it can."""
    from tfyarn import pyenv

    try:
        pyenv.fingerprint()
    except SpecError as e:
        return str(e).removeprefix("python_env: packed ")
    return None


def choose(conf_dir: Path | None) -> EnvChoice:
    """What ``auto`` is for a submit to the cluster configured in ``conf_dir`` (None: unknown)."""
    nms = local_nodemanagers(conf_dir)
    if nms:
        paths = needed_paths()
        hidden = {node: path for node, pid in nms.items() if (path := unseen(pid, paths)) is not None}
        if not hidden:
            return EnvChoice("local", f"every node of the local cluster sees {sys.executable}")
        node, path = min(hidden.items())
        not_local = f"the local cluster's node {node} does not see {path}"
    elif nms is not None:
        not_local = "no NodeManager of the local cluster runs"
    else:
        not_local = "the cluster is not this machine's local one"
    problem = pack_problem()
    if problem is None:
        return EnvChoice("packed", f"{not_local}; this environment {sys.prefix} is shipped")
    return EnvChoice(
        "local",
        f"{not_local}, and this environment cannot be shipped: {problem}",
        warning=(
            f"python_env auto: containers will run {sys.executable}, which every node needs at that path "
            f"with your packages, because this environment cannot be shipped ({problem}); "
            "pass --python-env local to say that the nodes have it, or --python-env ENV.tar.gz"
        ),
    )
