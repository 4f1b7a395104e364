"""Moving trees of files between filesystems: parallel, verified, retried, resumable, atomic on publish.

- ``copy_tree`` copies with N threads; each file lands as ``<name>.tfyarn-part``
  and is renamed once its size checks out, so a partial file never looks
  complete and a second run skips what is already there (resume).
- ``publish`` uploads to a hidden sibling of the destination and renames it
  into place, so a failed or killed upload leaves nothing at the destination.
- ``shard`` gives worker i of n a disjoint slice of the sorted file list.
"""
from __future__ import annotations

import posixpath
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pyarrow.fs as pafs

from tfyarn.errors import StorageError
from tfyarn.storage.fs import Location

CHUNK = 8 * 1024 * 1024
# Every stream is opened with compression=None: pyarrow would otherwise (de)compress
# by file extension, and staging must never change a byte.
PART = ".tfyarn-part"
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


def list_files(src: Location) -> list[FileEntry]:
    """Every file under ``src`` (or ``src`` itself), sorted by relative path."""
    info = src.info()
    if info.type == pafs.FileType.NotFound:
        raise StorageError(f"{src.uri} does not exist")
    if info.type == pafs.FileType.File:
        return [FileEntry(posixpath.basename(src.path), info.size)]
    infos = src.fs.get_file_info(pafs.FileSelector(src.path, recursive=True))
    root = src.path.rstrip("/") + "/"
    files = [FileEntry(i.path[len(root):] if i.path.startswith(root) else posixpath.relpath(i.path, src.path), i.size)
             for i in infos if i.type == pafs.FileType.File and not i.path.endswith(PART)]
    return sorted(files, key=lambda f: f.rel)


def shard(files: list[FileEntry], index: int, count: int) -> list[FileEntry]:
    """Worker ``index`` of ``count``: every count-th file of the sorted list."""
    return files[index::count]


def _src_path(src: Location, f: FileEntry, single: bool) -> str:
    return src.path if single else posixpath.join(src.path, f.rel)


def copy_tree(src: Location, dst: Location, files: list[FileEntry] | None = None, threads: int = 10,
              retries: int = 3, progress: Progress | None = None) -> CopyReport:
    """Copy ``files`` (default: all) of ``src`` into the directory ``dst``."""
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

    def one(f: FileEntry) -> None:
        target = posixpath.join(dst.path, f.rel)
        have = dst.fs.get_file_info(target)
        if have.type == pafs.FileType.File and have.size == f.size:
            with lock:
                report.skipped += 1
            advance(f.size)
            return
        for attempt in range(retries + 1):
            copied = 0
            try:
                dst.fs.create_dir(posixpath.dirname(target), recursive=True)
                with src.fs.open_input_stream(_src_path(src, f, single), compression=None) as fin, \
                        dst.fs.open_output_stream(target + PART, compression=None) as fout:
                    while chunk := fin.read(CHUNK):
                        fout.write(chunk)
                        copied += len(chunk)
                        advance(len(chunk))
                got = dst.fs.get_file_info(target + PART).size
                if got != f.size:
                    raise StorageError(f"size mismatch for {f.rel}: {got} bytes, expected {f.size}")
                dst.fs.move(target + PART, target)
                with lock:
                    report.files += 1
                    report.bytes += f.size
                return
            except Exception as e:
                advance(-copied)
                if attempt == retries:
                    with lock:
                        report.failures.append(f"{f.rel}: {e}")
                    return
                with lock:
                    report.retries += 1
                time.sleep(0.5 * 2 ** attempt)

    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        list(pool.map(one, files))
    report.seconds = time.monotonic() - t0
    if report.failures:
        raise StorageError(f"{len(report.failures)} file(s) failed to copy from {src.uri} after {retries} "
                           f"retries; first: {report.failures[0]}")
    return report


def publish(src: Location, dest: Location, run_id: str, overwrite: bool = False, threads: int = 10,
            progress: Progress | None = None) -> CopyReport:
    """Upload ``src`` to ``dest`` atomically: into a hidden sibling, then one rename."""
    if dest.exists() and not overwrite:
        raise StorageError(f"{dest.uri} already exists; choose a new path or allow overwriting")
    parent, name = posixpath.split(dest.path.rstrip("/"))
    staging = Location(dest.uri.__class__(dest.uri.scheme, dest.uri.authority,
                                          posixpath.join(parent, f".{name}._tfyarn_tmp_{run_id}")), dest.fs)
    dest.fs.create_dir(parent, recursive=True)
    try:
        report = copy_tree(src, staging, threads=threads, progress=progress)
        if dest.exists():
            _delete(dest)
        dest.fs.move(staging.path, dest.path)
        return report
    except BaseException:
        _delete(staging)
        raise


def _delete(loc: Location) -> None:
    info = loc.info()
    if info.type == pafs.FileType.Directory:
        loc.fs.delete_dir(loc.path)
    elif info.type == pafs.FileType.File:
        loc.fs.delete_file(loc.path)


def put_file(src: Location, dest: Location, progress: Progress | None = None) -> int:
    """Copy one file so that ``dest`` appears only once complete (``.tfyarn-part``, then rename)."""
    size = src.info().size
    dest.fs.create_dir(posixpath.dirname(dest.path), recursive=True)
    done = 0
    with src.fs.open_input_stream(src.path, compression=None) as fin, \
            dest.fs.open_output_stream(dest.path + PART, compression=None) as fout:
        while chunk := fin.read(CHUNK):
            fout.write(chunk)
            done += len(chunk)
            if progress:
                progress(done, size)
    if dest.fs.get_file_info(dest.path + PART).size != size:
        dest.fs.delete_file(dest.path + PART)
        raise StorageError(f"size mismatch uploading {src.uri} to {dest.uri}")
    dest.fs.move(dest.path + PART, dest.path)
    return size


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
        dst.fs.create_dir(posixpath.dirname(target), recursive=True)
        left = f.size
        with src.fs.open_input_stream(posixpath.join(src.path, f.rel), compression=None) as fin, \
                dst.fs.open_output_stream(target + PART, compression=None) as fout:
            while left > 0 and (chunk := fin.read(min(CHUNK, left))):
                fout.write(chunk)
                left -= len(chunk)
        if have.type == pafs.FileType.File:
            dst.fs.delete_file(target)
        dst.fs.move(target + PART, target)
        copied += 1
    return copied
