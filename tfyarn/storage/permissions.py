"""Private permissions for tfyarn's caches of shipped code and environments.

pyarrow's FileSystem API has no chmod, so HDFS permissions go through
hdfs-native's client: the one behind the fsspec handler when that is what
tfyarn uses, else one made for the same namenode (libhdfs cannot chmod
through pyarrow). A local URI uses os.chmod.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

from tfyarn import credentials
from tfyarn.errors import StorageError
from tfyarn.storage.fs import Location

DIR_MODE = 0o700
FILE_MODE = 0o600


@lru_cache(maxsize=4)
def _native(url: str | None) -> Any:
    from hdfs_native import Client

    credentials.require()  # hdfs-native may crash setting up Kerberos with no ticket
    return Client(url)  # None: the default filesystem of HADOOP_CONF_DIR


def _client(loc: Location) -> Any:
    """An hdfs-native Client for ``loc``'s filesystem; None for local files."""
    if loc.uri.scheme == "file":
        return None
    fsspec = getattr(getattr(loc.fs, "handler", None), "fs", None)
    client = getattr(fsspec, "client", None)
    if client is not None:
        return client
    return _native(f"{loc.uri.scheme}://{loc.uri.authority}" if loc.uri.authority else None)


@contextmanager
def _named(path: str) -> Iterator[None]:
    """hdfs-native's plain exceptions as one StorageError line naming the path."""
    try:
        yield
    except (OSError, RuntimeError) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]  # the namenode's message, not its Java stack
        raise StorageError(
            f"cannot make {path} private to you ({first}); check that you own it (hdfs dfs -ls) or remove it"
        ) from None


def set_mode(loc: Location, mode: int) -> None:
    """chmod ``loc`` (a file or dir that exists)."""
    client = _client(loc)
    with _named(loc.path):
        if client is None:
            os.chmod(loc.path, mode)
        else:
            client.set_permission(loc.path, mode)


def private_dir(loc: Location, path: str) -> None:
    """``path`` on ``loc``'s filesystem exists with DIR_MODE (made so if it existed with another)."""
    client = _client(loc)
    with _named(path):
        if client is None:
            os.makedirs(path, DIR_MODE, exist_ok=True)
            os.chmod(path, DIR_MODE)
        else:
            client.mkdirs(path, DIR_MODE, True)
            client.set_permission(path, DIR_MODE)


def private_cache(dest: Location) -> None:
    """Make the cache dirs above ``dest`` (``.../.tfyarn/<kind>/file``) 0700, so only the user reaches its files."""
    kind_dir = posixpath.dirname(dest.path)
    private_dir(dest, posixpath.dirname(kind_dir))
    private_dir(dest, kind_dir)
