"""``tfyarn fetch``: bring a job's published outputs (or any HDFS path) to this machine.

Each fetched dir holds a manifest (``.tfyarn-fetch.json``): the source URI
and, per file, its size, the source's modification time and the sha256 of
the bytes written here. A later fetch skips a file only when all of these
still agree, so a different job's outputs of equal sizes are fetched, not
taken for "already there".
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import click

from tfyarn.status import is_app_id

if TYPE_CHECKING:
    from tfyarn.storage import CopyReport, FileEntry, Location

_NO_NAMES = ("", ".", "..")


def base_name(uri: str) -> str | None:
    """The last path segment of ``uri`` as written; None when it names no dir of its own ('', '.', '..')."""
    path = urlparse(uri).path if "://" in uri else uri
    name = posixpath.basename(path.rstrip("/"))
    return None if name in _NO_NAMES else name


def unique_subdirs(uris: list[str]) -> list[str]:
    """One local sub-dir per output: DEST itself for one, else each base name, repeats made NAME-2, NAME-3..."""
    if len(uris) == 1:
        return [""]
    names = [base_name(u) or "" for u in uris]
    used: set[str] = set()
    out = []
    for name in names:
        candidate, i = name, 2
        while candidate in used or (candidate != name and candidate in names):
            candidate, i = f"{name}-{i}", i + 1
        used.add(candidate)
        out.append(candidate)
    return out


def local_target(dest: str, sub: str) -> str:
    """``dest/sub`` resolved, refused unless it is a dir (or nothing yet) inside ``dest``."""
    root = os.path.realpath(dest)
    target = os.path.realpath(os.path.join(root, sub))
    if os.path.commonpath([root, target]) != root:
        raise click.ClickException(
            f"{os.path.join(dest, sub)} resolves to {target}, outside {dest}; remove that "
            "link or fetch into another DEST"
        )
    if os.path.exists(target) and not os.path.isdir(target):
        raise click.ClickException(f"{target} is a file; move it away or fetch into another DEST")
    return target


def _sources(source: str) -> list[str]:
    """The URIs to fetch: a job's declared outputs, or the one URI given."""
    if not is_app_id(source):
        if base_name(source) is None:
            raise click.BadParameter(
                f"{source!r} names no file or dir of its own (its last part is empty, "
                "'.' or '..'); write the path it means, e.g. hdfs:///models/run1",
                param_hint="SOURCE",
            )
        from tfyarn.hadoop_env import discover
        from tfyarn.preflight import check_namenode
        from tfyarn.storage import parse_uri

        hadoop = discover()
        hadoop.apply()  # hdfs-native finds the cluster through HADOOP_CONF_DIR
        uri = parse_uri(source, "SOURCE")
        if uri.scheme == "hdfs":
            check_namenode(uri, hadoop.conf_dir)
        return [source]
    from tfyarn.client import Client

    with Client() as client:
        rep = client.report(source)
        doc = client.status_doc(source)
    if doc is None:
        raise click.ClickException(
            f"{source}: its outputs are not known yet (YARN is still aggregating the "
            "job's logs); try again in a few seconds, or fetch the hdfs:// path"
        )
    if not doc.outputs:
        raise click.ClickException(f"{source} declared no outputs (tfyarn submit --output DIR:URI)")
    if rep.state.value != "SUCCEEDED":
        raise click.ClickException(f"{source} ended {rep.state.value}: its outputs were not published")
    dests = [o.dest for o in doc.outputs]
    for dest in dests:
        if base_name(dest) is None:
            raise click.ClickException(
                f"{source} has output {dest!r}, which names no dir of its own (its last part "
                "is empty, '.' or '..'); fetch the hdfs:// path it was published to"
            )
    return dests


def sha256_of(path: str) -> str | None:
    """The sha256 of the regular file at ``path``; None when absent or a symlink (not what fetch wrote)."""
    if not os.path.isfile(path) or os.path.islink(path):
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def read_manifest(target: str) -> dict[str, Any]:
    """The manifest an earlier fetch left in ``target``; empty when none (or unreadable: then nothing is trusted)."""
    from tfyarn.storage import MANIFEST

    try:
        with open(os.path.join(target, MANIFEST), encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict):
        return {}
    return doc


def write_manifest(target: str, source: str, files: dict[str, dict[str, Any]]) -> None:
    """Replace ``target``'s manifest in one rename, so it is never half-written."""
    from tfyarn.storage import MANIFEST, open_new_local
    from tfyarn.storage.transfer import PART

    path = os.path.join(target, MANIFEST)
    with open_new_local(path + PART) as f:  # a part file: never listed as content, even if left behind
        f.write(json.dumps({"source": source, "files": files}, indent=1, sort_keys=True).encode())
    os.replace(path + PART, path)


def remove_unchanged(target: str, recorded: dict[str, dict[str, Any]]) -> list[str]:
    """Delete the files an earlier fetch wrote (and nobody changed since); return them. Others stay."""
    removed = []
    for rel, rec in recorded.items():
        path = os.path.normpath(os.path.join(target, rel))
        if os.path.commonpath([target, path]) != target or sha256_of(path) != rec.get("sha256"):
            continue
        os.unlink(path)
        removed.append(rel)
        parent = os.path.dirname(path)
        while parent != target and os.path.commonpath([target, parent]) == target:
            try:
                os.rmdir(parent)  # only when empty
            except OSError:
                break
            parent = os.path.dirname(parent)
    return removed


def fetch_into(
    src: Location,
    source: str,
    files: list[FileEntry],
    target: str,
    threads: int = 10,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[CopyReport, int]:
    """Fetch ``files`` of ``src`` into the local dir ``target``; return the report and the stale files removed.

    A file is skipped only if the manifest says it came from ``source`` with
    the same size and modification time and the local copy still hashes as
    recorded. Files an earlier fetch brought from another source, or that
    the source no longer has, are removed first (if unchanged), so the dir
    never mixes two sources; the count returned is of those ``files`` lacks.
    """
    from tfyarn.storage import copy_tree, locate, modification_times, parse_uri

    mtimes = modification_times(src)
    old = read_manifest(target)
    same = old.get("source") == source
    recorded: dict[str, dict[str, Any]] = old.get("files", {})
    listed = {f.rel for f in files}
    stale = remove_unchanged(target, {r: v for r, v in recorded.items() if not same or r not in listed})
    trusted = recorded if same else {}
    kept: set[str] = set()

    def keep(f: FileEntry) -> bool:
        rec, mtime = trusted.get(f.rel) or {}, mtimes.get(f.rel)
        ok = (
            mtime is not None
            and rec.get("mtime_ns") == mtime
            and rec.get("size") == f.size
            and sha256_of(os.path.join(target, f.rel)) == rec.get("sha256")
        )
        if ok:
            kept.add(f.rel)
        return ok

    digests: dict[str, str] = {}
    os.makedirs(target, exist_ok=True)
    try:
        report = copy_tree(
            src, locate(parse_uri(target)), files, threads=threads, progress=progress, keep=keep, digests=digests
        )
    finally:  # what did arrive is recorded, so a rerun resumes
        entries = {
            f.rel: {
                "size": f.size,
                "mtime_ns": mtimes.get(f.rel),
                "sha256": digests.get(f.rel) or trusted[f.rel]["sha256"],
            }
            for f in files
            if f.rel in digests or f.rel in kept
        }
        write_manifest(target, source, entries)
    return report, len(set(stale) - listed)


@click.command()
@click.argument("source")
@click.argument("dest", required=False, type=click.Path(file_okay=False))
@click.option("--list", "list_only", is_flag=True, help="Show what would be fetched, fetch nothing.")
@click.option("--threads", type=click.IntRange(min=1), default=10, show_default=True, help="Parallel downloads.")
def fetch(source: str, dest: str | None, list_only: bool, threads: int) -> None:
    """Copy SOURCE into the local dir DEST: a job's outputs (SOURCE = APP_ID) or a URI (hdfs:///models/run1).

    \b
    Layout: one output (or a URI) lands in DEST itself; several outputs land
    in DEST/NAME each, NAME being the last part of the output's URI, a repeated
    name made NAME-2, NAME-3... in the order the job declared them.
    A URI whose last part is empty, '.' or '..' is refused.

    \b
    Resume-safe: a file only appears under its name once complete, and each
    fetched dir keeps a manifest, .tfyarn-fetch.json (source URI; per file its
    size, modification time and the sha256 of the local copy). A file is
    skipped only if it came from the same source, unchanged there and here;
    files an earlier fetch brought from another source are removed first
    (unless edited since). Examples:
      tfyarn fetch application_1712345678901_0042 ./model
      tfyarn fetch application_1712345678901_0042 --list
      tfyarn fetch hdfs:///models/run1 ./model
    """
    from tfyarn.storage import list_files, locate, parse_uri

    if not list_only and dest is None:
        raise click.UsageError("missing DEST (or pass --list)")
    uris = _sources(source)
    targets = [local_target(dest, sub) for sub in unique_subdirs(uris)] if dest is not None else [""] * len(uris)
    for uri, target in zip(uris, targets, strict=True):
        src = locate(parse_uri(uri, "SOURCE"))
        files = list_files(src)
        total = sum(f.size for f in files)
        if list_only:
            for f in files:
                click.echo(f"{f.size:>14,}  {uri.rstrip('/')}/{f.rel}")
            click.echo(f"{len(files)} file(s), {total:,} bytes in {uri}")
            continue
        with click.progressbar(
            length=total, label=f"{uri} -> {target}", file=sys.stderr, show_pos=False, show_percent=True
        ) as bar:
            last = [0]

            def advance(done: int, _total: int, last: list[int] = last) -> None:
                bar.update(done - last[0])
                last[0] = done

            report, removed = fetch_into(src, str(src.uri), files, target, threads, advance)
        if removed:
            click.echo(
                f"Removed {removed} file(s) an earlier fetch of another source (or of files gone from "
                f"{uri}) left in {target}"
            )
        click.echo(
            f"Fetched {report.files} file(s), {report.bytes:,} bytes into {target} in {report.seconds:.1f} s"
            + (f" ({report.skipped} already there)" if report.skipped else "")
        )
