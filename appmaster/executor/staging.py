"""Inputs into the container before the user process starts; outputs out after it ends.

Both go through tfyarn.storage: parallel, size-verified, retried copies, and
an atomic publish (hidden sibling + rename) so a failed or killed job never
leaves a half-written model at the destination.
"""

from __future__ import annotations

import logging
import os
import time
from typing import TYPE_CHECKING

from tfyarn import protocol
from tfyarn.taskenv import StagingPlan

if TYPE_CHECKING:
    from tfyarn.storage.permissions import Access

# tfyarn.storage (pyarrow: ~0.15 s to import) loads only in a task that moves data: not on
# the start-up path of the others.


_log = logging.getLogger("tfyarn.executor.staging").info


def stage_inputs(plan: StagingPlan, workdir: str) -> tuple[dict[str, str], float, int]:
    """Download every input; return the env for the user process, the seconds and the bytes it took."""
    if not plan.inputs:
        return {}, 0.0, 0
    from tfyarn.storage import copy_tree, list_files, locate, parse_uri, shard

    t0 = time.monotonic()
    dirs, total = [], 0
    for inp in plan.inputs:
        src = locate(parse_uri(inp["src"]))
        dest_dir = os.path.abspath(os.path.join(workdir, inp["dest"]))
        files = list_files(src)
        if inp["mode"] == "shard" and plan.shard:
            files = shard(files, *plan.shard)
        report = copy_tree(src, locate(parse_uri(dest_dir)), files, threads=plan.download_threads)
        _log(
            f"staged {report.files} file(s), {report.bytes / 2**20:.1f} MiB from {src.uri} into {dest_dir} "
            f"in {report.seconds:.2f} s ({report.retries} retries)"
        )
        dirs.append(dest_dir)
        total += report.bytes
    env = {protocol.ENV_INPUT: dirs[0], protocol.ENV_INPUTS: os.pathsep.join(dirs)} if dirs else {}
    return env, time.monotonic() - t0, total


def publish_outputs(plan: StagingPlan, workdir: str, run_id: str) -> float:
    """Upload this task's outputs atomically; return the seconds it took."""
    from tfyarn.storage import locate, parse_uri, publish

    t0 = time.monotonic()
    for out in plan.outputs:
        local = os.path.abspath(os.path.join(workdir, out["src"]))
        if not os.path.exists(local):
            raise FileNotFoundError(f"output {out['src']!r} was not written by the command (looked in {local})")
        dest = locate(parse_uri(out["dest"]))
        report = publish(
            locate(parse_uri(local)),
            dest,
            run_id,
            overwrite=plan.overwrite,
            threads=plan.upload_threads,
            access=_access(plan),
        )
        _log(
            f"published {report.files} file(s), {report.bytes / 2**20:.1f} MiB from {out['src']} to {dest.uri} "
            f"in {report.seconds:.2f} s"
        )
    return time.monotonic() - t0


def publish_snapshot(plan: StagingPlan, workdir: str, run_id: str) -> list[str]:
    """Upload the outputs as they are now, each to <dest>.snapshots/<UTC time>-<app id>; return the URIs.

    The command keeps writing meanwhile, so a snapshot is as consistent as the
    files were while they were read (write checkpoints by rename to be safe).
    A restarted output task gets the latest one back (appmaster.executor.restore).
    """
    from tfyarn.storage import locate, parse_uri, publish

    name = protocol.snapshot_name(run_id, time.time())
    uris = []
    for out in plan.outputs:
        local = os.path.abspath(os.path.join(workdir, out["src"]))
        if not os.path.exists(local):
            continue
        dest = locate(parse_uri(protocol.snapshot_uri(out["dest"], name)))
        publish(locate(parse_uri(local)), dest, name, threads=plan.upload_threads, access=_access(plan))
        _log(f"snapshot of {out['src']} published to {dest.uri}")
        uris.append(str(dest.uri))
    return uris


def _access(plan: StagingPlan) -> Access:
    """Who may read what this task publishes: the job's --output-mode, and its ACL users on HDFS."""
    from tfyarn.storage.permissions import Access

    return Access(plan.output_mode, plan.readers)
