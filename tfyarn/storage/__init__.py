"""One storage layer for every file tfyarn moves: HDFS, viewfs and local paths behind pyarrow.fs.

    uri.py       parse and check hdfs:// viewfs:// file:// URIs (pure, light)
    fs.py        a pyarrow FileSystem for a URI: libhdfs where present, else hdfs-native;
                 filesystem(uri) is the one training scripts use to stream their data
    transfer.py  parallel, verified, retried copies; atomic publish; sharding; fetch manifests' name

The names below load their module on first use, so parsing a URI (spec
validation, --dry-run) never imports pyarrow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for type checkers
    from tfyarn.storage.fs import Location, filesystem, locate
    from tfyarn.storage.transfer import (
        MANIFEST,
        CopyReport,
        FileEntry,
        copy_tree,
        list_files,
        mirror,
        modification_times,
        open_new_local,
        publish,
        put_file,
        shard,
    )
    from tfyarn.storage.uri import StorageUri, parse_uri

_WHERE = {
    "StorageUri": "uri",
    "parse_uri": "uri",
    "Location": "fs",
    "locate": "fs",
    "filesystem": "fs",
    "CopyReport": "transfer",
    "copy_tree": "transfer",
    "list_files": "transfer",
    "mirror": "transfer",
    "publish": "transfer",
    "put_file": "transfer",
    "shard": "transfer",
    "FileEntry": "transfer",
    "MANIFEST": "transfer",
    "modification_times": "transfer",
    "open_new_local": "transfer",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'tfyarn.storage' has no attribute {name!r}")
    return getattr(importlib.import_module(f"tfyarn.storage.{_WHERE[name]}"), name)
