"""The extra nodes of a local cluster: how many it runs, and a private /tmp for each.

Nodes 2..N are NodeManagers on 127.0.0.2.. with dirs of their own (see
layout.py). On one machine they would still share /tmp, so a job that
writes /tmp/x on one node and reads it on another would pass here and fail
on a real cluster. Each extra NodeManager therefore runs in a mount
namespace of its own (``unshare --mount --propagation private``) where
``<root>/nodes/<i>/tmp`` is bound onto /tmp; its containers inherit it.
Paths under /tmp that the node itself needs (the cluster dir, the jar
cache, this Python and its code, when they live there) are bound back in
at the same place, so every path means the same on every node.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

from tfyarn.cluster.java import java_home
from tfyarn.cluster.layout import MAX_NODES, ClusterLayout
from tfyarn.cluster.scripts import comment_safe
from tfyarn.errors import ClusterError

TMP = "/tmp"

WRAPPER = """#!/usr/bin/env bash
# private-tmp: written by `tfyarn cluster up`, for the local cluster in {root}.
# Usage (inside `unshare --mount --propagation private`): private-tmp NODE_TMP [KEEP...] -- COMMAND...
# Binds NODE_TMP onto /tmp for this process and its children only, each KEEP (a dir under /tmp)
# bound back at its own place first; then execs COMMAND, so its pid stays the daemon's.
set -euo pipefail
node_tmp=$1; shift
mkdir -p -- "$node_tmp"
while [ "$1" != -- ]; do
  keep=$1; shift
  mkdir -p -- "$node_tmp/${{keep#/tmp/}}"
  mount --bind "$keep" "$node_tmp/${{keep#/tmp/}}"
done
shift
mount --rbind "$node_tmp" /tmp
exec "$@"
"""


def wrapper_path(layout: ClusterLayout) -> Path:
    """Kept off the containers' PATH: only `up` runs it."""
    return layout.nodes_dir / "private-tmp"


def write_wrapper(layout: ClusterLayout) -> Path:
    path = wrapper_path(layout)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(WRAPPER.format(root=comment_safe(str(layout.root))))
    path.chmod(0o755)
    return path


def count_file(layout: ClusterLayout) -> Path:
    return layout.nodes_dir / "count"


def remembered_count(layout: ClusterLayout) -> int:
    """The node count the last `up` asked for: 1 for a new cluster (or an unreadable file)."""
    try:
        n = int(count_file(layout).read_text().strip())
    except (OSError, ValueError):
        return 1
    return n if 1 <= n <= MAX_NODES else 1


def remember_count(layout: ClusterLayout, n: int) -> None:
    count_file(layout).parent.mkdir(parents=True, exist_ok=True)
    count_file(layout).write_text(f"{n}\n")


def keep_paths(layout: ClusterLayout, candidates: list[str] | None = None) -> list[str]:
    """The dirs under /tmp an extra node must still see: outermost first, none inside another.

    By default: the cluster dir, the jar cache, Java, this Python's prefix
    and every dir on its sys.path (an editable install's source among them).
    """
    if candidates is None:
        candidates = [str(layout.root), str(layout.jar_cache), str(java_home()), sys.prefix, *sys.path]
    tmp = os.path.realpath(TMP)
    real = {os.path.realpath(c) for c in candidates if c and os.path.isabs(c) and os.path.isdir(c)}
    inside = sorted(r for r in real if r != tmp and os.path.commonpath([r, tmp]) == tmp)
    kept: list[str] = []
    for r in inside:  # sorted: an ancestor comes before what is inside it
        if not any(os.path.commonpath([r, k]) == k for k in kept):
            kept.append(r)
    return [TMP + r[len(tmp) :] for r in kept]


@cache
def unshare_problem() -> str | None:
    """Why a private mount namespace cannot be made here (not root, no unshare), or None if it can."""
    if not shutil.which("unshare"):
        return "no `unshare` command (util-linux) on PATH"
    try:
        probe = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "true"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"`unshare --mount` did not run: {e}"
    return None if probe.returncode == 0 else f"`unshare --mount` failed: {probe.stderr.strip() or probe.returncode}"


def private_tmp_wrapper(layout: ClusterLayout) -> tuple[str, ...]:
    """The command prefix that starts node ``layout.node``'s NodeManager with its own /tmp."""
    if layout.node == 1:
        raise ClusterError("node 1 shares the host's /tmp by design")
    layout.private_tmp.mkdir(parents=True, exist_ok=True)
    unshare = ("unshare", "--mount", "--propagation", "private", "--")
    return (*unshare, "bash", str(wrapper_path(layout)), str(layout.private_tmp), *keep_paths(layout), "--")


def has_own_mounts(pid: int) -> bool | None:
    """Whether process ``pid`` runs in another mount namespace than this one; None if it cannot be read."""
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt") != os.readlink("/proc/self/ns/mnt")
    except OSError:
        return None
