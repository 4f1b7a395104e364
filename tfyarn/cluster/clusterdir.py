"""The marker that makes a dir a tfyarn cluster dir: `down --purge` deletes only such dirs.

``up`` writes ``<root>/.tfyarn-cluster`` into a dir it creates, an empty
one, or one that holds nothing but a layout an older ``up`` wrote (from
before the marker existed). It never marks a dir holding anything else:
``TFYARN_CLUSTER_DIR=$HOME`` must not turn the home dir into something
``--purge`` deletes. Purge trusts the marker alone, not a look at the
contents: a ``conf/yarn-site.xml`` by tfyarn proves tfyarn wrote there,
not that nothing else lives beside it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tfyarn.errors import ClusterError

MARKER_NAME = ".tfyarn-cluster"
MARKER_TEXT = "tfyarn local cluster dir, v1: `tfyarn cluster down --purge` deletes this dir\n"
_IDENT = MARKER_TEXT.split(",")[0]

# What an older `up` put in a cluster dir, top level and (None: anything) one level down.
_LEGACY: dict[str, set[str] | None] = {
    "bin": {"yarn", "hdfs", "hadoop"},
    "conf": {
        "core-site.xml",
        "hdfs-site.xml",
        "yarn-site.xml",
        "capacity-scheduler.xml",
        "resource-types.xml",
        "log4j.properties",
    },
    "pids": {"namenode.pid", "datanode.pid", "resourcemanager.pid", "nodemanager.pid"},
    "gpu-discovery": {"nvidia-smi"},
    "data": {"namenode", "datanode", "nm-local", "tmp"},
    "logs": None,  # Hadoop's daemons name their own log files
}


def is_cluster_dir(root: Path) -> bool:
    """Whether ``root`` carries the marker: a regular file (no symlink) naming tfyarn."""
    marker = root / MARKER_NAME
    try:
        return not marker.is_symlink() and marker.is_file() and marker.read_text().startswith(_IDENT)
    except (OSError, UnicodeDecodeError):
        return False


def claim(root: Path) -> bool:
    """Mark ``root`` as a cluster dir if it is new, empty or an older tfyarn layout; return whether marked."""
    if is_cluster_dir(root):
        return True
    try:
        if root.exists() and any(root.iterdir()) and not _legacy_layout(root):
            return False
        root.mkdir(parents=True, exist_ok=True)
        (root / MARKER_NAME).write_text(MARKER_TEXT)
    except OSError as e:
        raise ClusterError(f"cannot use {root} as the cluster dir: {e.strerror or e}") from None
    return True


def _legacy_layout(root: Path) -> bool:
    """Whether ``root`` holds only what `up` wrote before it wrote the marker, scripts by tfyarn included."""
    for entry in root.iterdir():
        if entry.name not in _LEGACY or entry.is_symlink() or not entry.is_dir():
            return False
        allowed = _LEGACY[entry.name]
        if allowed is not None and any(c.name not in allowed for c in entry.iterdir()):
            return False
    scripts = list((root / "bin").glob("*")) if (root / "bin").is_dir() else []
    return bool(scripts) and all(_written_by_up(s) for s in scripts)


def _written_by_up(script: Path) -> bool:
    try:
        lines = script.read_text(errors="replace").splitlines()[:2]
    except OSError:
        return False
    return len(lines) == 2 and lines[1].startswith(f"# {script.name}: written by `tfyarn cluster up`")


def check_purgeable(root: Path) -> None:
    """Refuse, before anything is stopped, to purge a dir without the marker."""
    if root.exists() and not is_cluster_dir(root):
        raise ClusterError(
            f"{root} does not look like a tfyarn cluster dir (no {MARKER_NAME} file from `tfyarn cluster up`); "
            "nothing was stopped or deleted"
        )


def purge(root: Path) -> bool:
    """Delete a marked cluster dir, the marker last (so an interrupted purge can be run again).

    A symlinked root keeps its link and its (emptied) target dir. Returns
    False if there was nothing to delete.
    """
    if not root.exists():
        return False
    check_purgeable(root)
    try:
        for child in root.iterdir():
            if child.name == MARKER_NAME:
                continue
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
        (root / MARKER_NAME).unlink()
        if not root.is_symlink():
            root.rmdir()
    except OSError as e:
        raise ClusterError(f"could not delete all of {root}: {e}") from None
    return True
