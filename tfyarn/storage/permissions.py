"""Permissions: private caches of shipped code and environments, and the job's outputs as asked.

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
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pyarrow.fs as pafs

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


@dataclass(frozen=True)
class Access:
    """Who may read published outputs: the owner (``mode``, the dirs'; files get it less x), and
    ``readers`` besides (an HDFS ACL entry each; ``*``: everyone, through the mode's other bits)."""

    mode: int = DIR_MODE
    readers: tuple[str, ...] = ()


def share(loc: Location, access: Access, recursive: bool = True) -> None:
    """Give the dir at ``loc`` (and, ``recursive``, all below it) ``access``.

    Named readers need HDFS (a local tree takes the mode only). The mode goes
    first: on a path with an ACL, a chmod resets the ACL's mask.
    """
    mode = access.mode | (0o005 if "*" in access.readers else 0)
    named = [r for r in access.readers if r != "*"]
    client = _client(loc)
    tree = [(loc.path, True)]
    if recursive:
        found = loc.fs.get_file_info(pafs.FileSelector(loc.path, recursive=True))
        tree += [(i.path, i.type == pafs.FileType.Directory) for i in found]
    if named and client is not None:
        from hdfs_native import AclEntry

        acl = {d: [AclEntry("user", "access", "r-x" if d else "r--", name) for name in named] for d in (True, False)}
    for path, is_dir in tree:
        with _shared(path):
            bits = mode if is_dir else mode & 0o666
            if client is None:
                os.chmod(path, bits)
                continue
            client.set_permission(path, bits)
            if named:
                client.modify_acl_entries(path, acl[is_dir])


def private_job_dir(loc: Location, readers: tuple[str, ...]) -> None:
    """The job's dir (status, TensorBoard summaries) made and kept to its owner and ``readers``.

    Only the dir itself: what lies below is reached through it, whatever its own mode.
    """
    with _named(loc.path):
        loc.fs.create_dir(loc.path, recursive=True)
    share(loc, Access(DIR_MODE, readers), recursive=False)


@contextmanager
def _shared(path: str) -> Iterator[None]:
    try:
        yield
    except (OSError, RuntimeError) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        hint = " (the NameNode needs dfs.namenode.acls.enabled=true for ACL readers)" if "acl" in first.lower() else ""
        raise StorageError(f"cannot set the permissions of {path}: {first}{hint}") from None
