"""A restarted output task gets its outputs' latest snapshot back before its command starts.

``--save-every`` (and ``tfyarn save``) publish each output of the output task
to ``<dest>.snapshots/<UTC stamp>-<app id>`` (tfyarn.protocol.snapshot_name).
When that task starts again (its own restart, an ``all`` restart, a second AM
attempt: all the same application), the newest snapshot named for *this*
application is downloaded into the output's local dir, where the user's
script finds its checkpoints. Another job's snapshots at the same destination
are never taken. No snapshot: nothing happens. A snapshot that cannot be
downloaded raises RestoreError: the task must not silently train from scratch.
"""

from __future__ import annotations

import logging
import os
import posixpath
import time
from dataclasses import dataclass
from typing import Any

from tfyarn import protocol
from tfyarn.taskenv import StagingPlan

_log = logging.getLogger("tfyarn.executor.restore").info


class RestoreError(Exception):
    """The latest snapshot exists but could not be brought back."""


@dataclass(frozen=True)
class Restored:
    src: str  # the output's local dir, as the job names it (./model)
    uri: str  # the snapshot it got
    files: int
    bytes: int
    seconds: float

    def line(self) -> str:
        return (
            f"restored {self.src} from {self.uri} ({self.files} file(s), {self.bytes / 2**20:.1f} MiB, "
            f"{self.seconds:.2f} s)"
        )


def latest_snapshot(names: list[str], app_id: str) -> str | None:
    """The newest of ``names`` that is a snapshot of application ``app_id``; None if there is none."""
    mine = [(parsed[0], n) for n in names if (parsed := protocol.parse_snapshot_name(n)) and parsed[1] == app_id]
    return max(mine)[1] if mine else None


def snapshot_names(snapshots: Any) -> list[str]:
    """The entries of the snapshots dir (a tfyarn.storage Location); [] when it does not exist."""
    import pyarrow.fs as pafs

    info = snapshots.info()
    if info.type == pafs.FileType.NotFound:
        return []
    if info.type != pafs.FileType.Directory:
        raise NotADirectoryError(f"{snapshots.uri} is not a directory")
    selector = pafs.FileSelector(snapshots.path, recursive=False, allow_not_found=True)
    return [
        posixpath.basename(i.path.rstrip("/"))
        for i in snapshots.fs.get_file_info(selector)
        if i.type == pafs.FileType.Directory
    ]


def restore_output(out: dict[str, str], workdir: str, app_id: str, threads: int = 10) -> Restored | None:
    """Download the latest snapshot of one output ({"src", "dest"}) of ``app_id`` into its local dir."""
    from tfyarn.storage import copy_tree, locate, parse_uri

    base = locate(parse_uri(protocol.snapshots_uri(out["dest"])))
    try:
        name = latest_snapshot(snapshot_names(base), app_id)
    except Exception as e:
        raise RestoreError(f"cannot list the snapshots in {base.uri}: {type(e).__name__}: {e}") from e
    if name is None:
        return None
    src = locate(parse_uri(protocol.snapshot_uri(out["dest"], name)))
    local = os.path.abspath(os.path.join(workdir, out["src"]))
    t0 = time.monotonic()
    try:
        report = copy_tree(src, locate(parse_uri(local)), threads=threads)
    except Exception as e:
        raise RestoreError(f"cannot download the snapshot {src.uri} into {local}: {type(e).__name__}: {e}") from e
    return Restored(out["src"], str(src.uri), report.files + report.skipped, report.bytes, time.monotonic() - t0)


def restore_outputs(plan: StagingPlan, workdir: str, app_id: str) -> list[Restored]:
    """Every output's latest snapshot of this application into its local dir (plan.resume); log each one."""
    if not plan.resume:
        return []
    done = []
    for out in plan.outputs:
        restored = restore_output(out, workdir, app_id, plan.download_threads)
        if restored:
            _log(restored.line())
            done.append(restored)
    return done
