"""A pyarrow FileSystem for a storage URI.

HDFS goes through pyarrow's HadoopFileSystem when libhdfs is installed (most
Hadoop nodes), else through hdfs-native (Rust, no JVM) behind pyarrow's
fsspec handler. Both read the cluster from HADOOP_CONF_DIR.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pyarrow.fs as pafs

from tfyarn.errors import UnreachableError
from tfyarn.storage.uri import StorageUri, parse_uri


@dataclass(frozen=True)
class Location:
    uri: StorageUri
    fs: pafs.FileSystem

    @property
    def path(self) -> str:
        return self.uri.path

    def info(self) -> pafs.FileInfo:
        return self.fs.get_file_info(self.path)

    def exists(self) -> bool:
        return self.info().type != pafs.FileType.NotFound


def libhdfs_path() -> Path | None:
    """libhdfs.so where pyarrow looks for it, if present."""
    for env in ("ARROW_LIBHDFS_DIR", "HADOOP_HOME"):
        base = os.environ.get(env)
        if not base:
            continue
        for candidate in (Path(base) / "libhdfs.so", Path(base) / "lib" / "native" / "libhdfs.so"):
            if candidate.exists():
                return candidate
    return None


@lru_cache(maxsize=16)
def _filesystem(scheme: str, authority: str) -> pafs.FileSystem:
    if scheme == "file":
        return pafs.LocalFileSystem()
    if scheme == "hdfs" and libhdfs_path():
        host, _, port = authority.partition(":")
        return pafs.HadoopFileSystem(host or "default", int(port or 0))
    from hdfs_native.fsspec import HdfsFileSystem, ViewfsFileSystem  # only when HDFS is used

    from tfyarn import credentials

    credentials.require()  # hdfs-native may crash setting up Kerberos with no ticket

    cls = ViewfsFileSystem if scheme == "viewfs" else HdfsFileSystem
    host, _, port = authority.partition(":")
    try:
        native = cls(host=host or None, port=int(port) if port else None)
    except Exception as e:  # hdfs-native raises plain exceptions for config problems
        raise UnreachableError(f"cannot set up an HDFS client for {scheme}://{authority}: {e}") from None
    return pafs.PyFileSystem(pafs.FSSpecHandler(native))


def forget_clients() -> None:
    """Drop every cached HDFS client: the next call connects anew, with the process's current
    delegation tokens (tfyarn.renewal swaps them in)."""
    _filesystem.cache_clear()
    if "hdfs_native.fsspec" in sys.modules:  # fsspec keeps instances of its own
        from hdfs_native.fsspec import HdfsFileSystem, ViewfsFileSystem

        HdfsFileSystem.clear_instance_cache()
        ViewfsFileSystem.clear_instance_cache()


def locate(uri: StorageUri) -> Location:
    return Location(uri, _filesystem(uri.scheme, uri.authority))


def filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    """The pyarrow FileSystem and path for ``uri``, for training scripts that stream their data.

    ``fs, path = filesystem("hdfs:///data/shards")``, then ``fs.get_file_info(pafs.FileSelector(path))``
    or ``pyarrow.parquet.ParquetFile(fs.open_input_file(f))``: the same client tfyarn's staging uses
    (libhdfs or hdfs-native, the cluster from HADOOP_CONF_DIR, the container's delegation tokens).
    """
    loc = locate(parse_uri(uri, "uri"))
    return loc.fs, loc.path
