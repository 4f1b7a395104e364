"""Moving trees of files between filesystems: parallel, verified, retried, resumable, atomic on publish.

- ``copy_tree`` copies with N threads; each file lands as ``<name>.tfyarn-part``
  and is renamed once its size checks out, so a partial file never looks
  complete and a second run skips what is already there (resume).
- ``publish`` uploads to a hidden sibling of the destination and renames it
  into place, so a failed or killed upload leaves nothing at the destination,
  and a destination that appeared meanwhile (another job's) is never touched.
- ``shard`` gives worker i of n a disjoint slice of the sorted file list.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO

import pyarrow.fs as pafs

from tfyarn.errors import StorageError
from tfyarn.storage.fs import Location

if TYPE_CHECKING:
    from tfyarn.storage.permissions import Access

CHUNK = 8 * 1024 * 1024
# Every stream is opened with compression=None: pyarrow would otherwise (de)compress
# by file extension, and staging must never change a byte.
PART = ".tfyarn-part"
MANIFEST = ".tfyarn-fetch.json"  # written by `tfyarn fetch` next to what it fetched; never content
Progress = Callable[[int, int], None]  # (bytes done, bytes total)


@dataclass(frozen=True)
class FileEntry:
    rel: str  # path relative to the tree's root ("." for a single file: its base name)
    size: int


@dataclass
class CopyReport:
    files: int = 0
    bytes: int = 0
    skipped: int = 0  # already complete at the destination
    seconds: float = 0.0
    retries: int = 0
    failures: list[str] = field(default_factory=list)


def _is_content(path: str) -> bool:
    return not path.endswith(PART) and posixpath.basename(path) != MANIFEST


def list_files(src: Location) -> list[FileEntry]:
    """Every file under ``src`` (or ``src`` itself), sorted by relative path; no part files or fetch manifests."""
    info = src.info()
    if info.type == pafs.FileType.NotFound:
        raise StorageError(f"{src.uri} does not exist")
    if info.type == pafs.FileType.File:
        return [FileEntry(posixpath.basename(src.path), info.size)]
    infos = src.fs.get_file_info(pafs.FileSelector(src.path, recursive=True))
    root = src.path.rstrip("/") + "/"
    files = [
        FileEntry(_rel(i.path, root, src.path), i.size)
        for i in infos
        if i.type == pafs.FileType.File and _is_content(i.path)
    ]
    return sorted(files, key=lambda f: f.rel)


def _rel(path: str, root: str, src_path: str) -> str:
    return path[len(root) :] if path.startswith(root) else posixpath.relpath(path, src_path)


def modification_times(src: Location) -> dict[str, int]:
    """Relative path -> modification time (ns) of every file under ``src``, as ``list_files`` names them.

    pyarrow's bridge to fsspec (hdfs-native) drops HDFS modification times,
    so those are asked of the fsspec filesystem behind it.
    """
    single = src.info().type == pafs.FileType.File
    root = src.path.rstrip("/") + "/"
    inner = getattr(getattr(src.fs, "handler", None), "fs", None)
    if inner is None:
        infos = [src.info()] if single else src.fs.get_file_info(pafs.FileSelector(src.path, recursive=True))
        return {
            posixpath.basename(i.path) if single else _rel(i.path, root, src.path): i.mtime_ns
            for i in infos
            if i.type == pafs.FileType.File and i.mtime_ns is not None
        }
    found = {src.path: inner.info(src.path)} if single else inner.find(src.path, detail=True)
    return {
        posixpath.basename(p) if single else _rel(p, root, src.path): _fsspec_mtime_ns(d)
        for p, d in found.items()
        if d.get("type") == "file"
    }


def _fsspec_mtime_ns(detail: dict[str, Any]) -> int:
    if detail.get("modification_time") is not None:  # hdfs-native: ms since the epoch
        return int(detail["modification_time"]) * 1_000_000
    mtime = detail.get("mtime", 0)  # fsspec's local filesystem: seconds, or a datetime
    return int((mtime.timestamp() if hasattr(mtime, "timestamp") else float(mtime)) * 1e9)


def shard(files: list[FileEntry], index: int, count: int) -> list[FileEntry]:
    """Worker ``index`` of ``count``: every count-th file of the sorted list."""
    return files[index::count]


def _src_path(src: Location, f: FileEntry, single: bool) -> str:
    return src.path if single else posixpath.join(src.path, f.rel)


def open_new_local(path: str) -> BinaryIO:
    """Open a new local file at ``path`` to write; whatever was there, a planted symlink too, is unlinked first.

    O_EXCL|O_NOFOLLOW: a link put there meanwhile makes the open fail
    instead of writing through it to the file it points at.
    """
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    return os.fdopen(fd, "wb")


def _open_part(fs: pafs.FileSystem, path: str) -> Any:
    """A part file to write; on the local disk never through a link planted at its name."""
    if isinstance(fs, pafs.LocalFileSystem):
        return open_new_local(path)
    return fs.open_output_stream(path, compression=None)


def _land(
    src_fs: pafs.FileSystem,
    src_path: str,
    dst_fs: pafs.FileSystem,
    target: str,
    *,
    expect: int | None = None,
    limit: int | None = None,
    tick: Callable[[int], None] | None = None,
    digest: Any = None,
) -> int:
    """Copy one file to ``target`` through ``target.tfyarn-part``, renamed into place only once written.

    ``expect``: the size the copy must have (else StorageError, part removed);
    ``limit``: copy at most this many bytes (a file still growing); ``tick``
    gets each chunk's length; ``digest`` (hashlib) sees every byte written.
    """
    part = target + PART
    dst_fs.create_dir(posixpath.dirname(target), recursive=True)
    copied = 0
    with src_fs.open_input_stream(src_path, compression=None) as fin, _open_part(dst_fs, part) as fout:
        # read_buffer: Arrow's own buffer, written from as it is; read() would copy each chunk into
        # a new bytes object first (1 GiB from HDFS read into nothing: 1.1 s against 1.5-1.8 s).
        while (want := CHUNK if limit is None else min(CHUNK, limit - copied)) > 0 and (
            n := (chunk := fin.read_buffer(want)).size
        ):
            fout.write(chunk)
            copied += n
            if digest is not None:
                digest.update(chunk)
            if tick:
                tick(n)
    if expect is not None and (got := dst_fs.get_file_info(part).size) != expect:
        dst_fs.delete_file(part)
        raise StorageError(f"size mismatch writing {target}: {got} bytes, expected {expect}")
    replace_file(dst_fs, part, target)
    return copied


def replace_file(fs: pafs.FileSystem, part: str, target: str) -> None:
    """Rename ``part`` to ``target``; HDFS refuses to rename onto a file, so an old copy goes first there."""
    try:
        fs.move(part, target)
    except OSError:
        if fs.get_file_info(target).type != pafs.FileType.File:
            raise
        fs.delete_file(target)
        fs.move(part, target)


def copy_tree(
    src: Location,
    dst: Location,
    files: list[FileEntry] | None = None,
    threads: int = 10,
    retries: int = 3,
    progress: Progress | None = None,
    keep: Callable[[FileEntry], bool] | None = None,
    digests: dict[str, str] | None = None,
) -> CopyReport:
    """Copy ``files`` (default: all) of ``src`` into the directory ``dst``.

    ``keep(f)`` says whether ``dst`` already holds ``f`` complete (default: a
    file of its size there); ``digests``, when given, receives each copied
    file's sha256 (of the bytes written) under its relative path.
    """
    single = src.info().type == pafs.FileType.File
    files = list_files(src) if files is None else files
    total = sum(f.size for f in files)
    report = CopyReport()
    lock = threading.Lock()
    done = [0]
    t0 = time.monotonic()
    dst.fs.create_dir(dst.path, recursive=True)

    def advance(n: int) -> None:
        with lock:
            done[0] += n
            if progress:
                progress(done[0], total)

    def same_size(f: FileEntry) -> bool:
        have = dst.fs.get_file_info(posixpath.join(dst.path, f.rel))
        return have.type == pafs.FileType.File and have.size == f.size

    def one(f: FileEntry) -> None:
        if (keep or same_size)(f):
            with lock:
                report.skipped += 1
            advance(f.size)
            return
        for attempt in range(retries + 1):
            copied = [0]

            def tick(n: int, copied: list[int] = copied) -> None:
                copied[0] += n
                advance(n)

            digest = hashlib.sha256() if digests is not None else None
            try:
                _land(
                    src.fs,
                    _src_path(src, f, single),
                    dst.fs,
                    posixpath.join(dst.path, f.rel),
                    expect=f.size,
                    tick=tick,
                    digest=digest,
                )
                with lock:
                    report.files += 1
                    report.bytes += f.size
                    if digest is not None and digests is not None:
                        digests[f.rel] = digest.hexdigest()
                return
            except Exception as e:
                advance(-copied[0])
                if attempt == retries:
                    with lock:
                        report.failures.append(f"{f.rel}: {e}")
                    return
                with lock:
                    report.retries += 1
                time.sleep(0.5 * 2**attempt)

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        list(pool.map(one, files))
    report.seconds = time.monotonic() - t0
    if report.failures:
        raise StorageError(
            f"{len(report.failures)} file(s) failed to copy from {src.uri} after {retries} "
            f"retries; first: {report.failures[0]}"
        )
    return report


def _sibling(dest: Location, name: str) -> Location:
    parent = posixpath.dirname(dest.path.rstrip("/"))
    return Location(dest.uri.__class__(dest.uri.scheme, dest.uri.authority, posixpath.join(parent, name)), dest.fs)


def _appeared(dest: Location) -> StorageError:
    return StorageError(
        f"{dest.uri} appeared while this job was uploading to it (another job's output?); it was "
        "left as it is: choose a new output path, or pass --overwrite to replace it"
    )


def publish(
    src: Location,
    dest: Location,
    run_id: str,
    overwrite: bool = False,
    threads: int = 10,
    progress: Progress | None = None,
    access: Access | None = None,
) -> CopyReport:
    """Upload ``src`` to ``dest`` atomically: into a hidden sibling, then one rename.

    ``access``, if given, is set on the whole upload before the rename: nobody
    sees the tree at ``dest`` with other permissions, even for a moment.

    Without ``overwrite`` a destination that exists, at the start or when the
    upload is done, fails the publish and is left untouched. With it, the old
    destination is moved aside, the new one moved in, then the old deleted,
    so no failure leaves the destination missing with nothing beside it.
    """
    if dest.exists() and not overwrite:
        raise StorageError(f"{dest.uri} already exists; choose a new output path, or pass --overwrite to replace it")
    name = posixpath.basename(dest.path.rstrip("/"))
    staging = _sibling(dest, f".{name}._tfyarn_tmp_{run_id}")
    dest.fs.create_dir(posixpath.dirname(staging.path), recursive=True)
    try:
        report = copy_tree(src, staging, threads=threads, progress=progress)
        if access is not None:
            from tfyarn.storage.permissions import share

            share(staging, access)
        if overwrite:
            _replace_dir(staging, dest, _sibling(dest, f".{name}._tfyarn_old_{run_id}_{uuid.uuid4().hex[:8]}"))
        else:
            _rename_onto_nothing(staging, dest)
        return report
    except BaseException:
        _delete(staging)  # only this job's own upload; whatever is at dest stays
        raise


def _rename_onto_nothing(staging: Location, dest: Location) -> None:
    """Rename ``staging`` to ``dest``, which must not exist; verify that ``dest`` is now exactly that tree.

    HDFS's rename2 (hdfs-native) refuses an existing destination; the classic
    rename (libhdfs) moves a dir *into* an existing dir instead, so that case
    is detected afterwards and undone.
    """
    if dest.exists():
        raise _appeared(dest)
    fs = staging.fs
    try:
        fs.move(staging.path, dest.path)
    except OSError:
        if dest.exists():
            raise _appeared(dest) from None
        raise
    inside = posixpath.join(dest.path, posixpath.basename(staging.path))
    if fs.get_file_info(inside).type != pafs.FileType.NotFound:
        fs.move(inside, staging.path)  # back out of the other job's dir, to be cleaned up as ours
        raise _appeared(dest)
    if staging.exists() or dest.info().type != pafs.FileType.Directory:
        raise StorageError(f"renaming {staging.uri} to {dest.uri} did not take effect; check that path and retry")


def _replace_dir(staging: Location, dest: Location, old: Location) -> None:
    """Put ``staging`` at ``dest``, replacing what is there: old aside, new in, old deleted."""
    moved_aside = dest.exists()
    if moved_aside:
        dest.fs.move(dest.path, old.path)
    try:
        _rename_onto_nothing(staging, dest)
    except BaseException:
        if moved_aside and not dest.exists():
            dest.fs.move(old.path, dest.path)  # put the previous output back
        raise
    if moved_aside:
        _delete(old)


def _delete(loc: Location) -> None:
    info = loc.info()
    if info.type == pafs.FileType.Directory:
        loc.fs.delete_dir(loc.path)
    elif info.type == pafs.FileType.File:
        loc.fs.delete_file(loc.path)


def put_file(src: Location, dest: Location, progress: Progress | None = None) -> int:
    """Copy one file so that ``dest`` appears only once complete (``.tfyarn-part``, then rename)."""
    size = src.info().size
    done = [0]

    def tick(n: int) -> None:
        done[0] += n
        if progress:
            progress(done[0], size)

    return _land(src.fs, src.path, dest.fs, dest.path, expect=size, tick=tick)


def mirror(src: Location, dst: Location) -> int:
    """Bring ``dst`` up to date with a tree whose files grow (TensorBoard event files).

    Files that are new or whose size differs are copied, up to the size
    listed (a file still being appended to is taken as of the listing),
    and replace the old copy in one rename. Returns the files copied.
    """
    copied = 0
    for f in list_files(src):
        target = posixpath.join(dst.path, f.rel)
        have = dst.fs.get_file_info(target)
        if have.type == pafs.FileType.File and have.size == f.size:
            continue
        _land(src.fs, posixpath.join(src.path, f.rel), dst.fs, target, limit=f.size)
        copied += 1
    return copied
