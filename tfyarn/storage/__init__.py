"""One storage layer for every file tfyarn moves: HDFS, viewfs and local paths behind pyarrow.fs.

    uri.py       parse and check hdfs:// viewfs:// file:// URIs (pure)
    fs.py        a pyarrow FileSystem for a URI: libhdfs where present, else hdfs-native
    transfer.py  parallel, verified, retried copies; atomic publish; sharding
"""
from tfyarn.storage.fs import Location, locate
from tfyarn.storage.transfer import CopyReport, copy_tree, list_files, publish, put_file, shard
from tfyarn.storage.uri import StorageUri, parse_uri

__all__ = ["CopyReport", "Location", "StorageUri", "copy_tree", "list_files", "locate", "parse_uri",
           "publish", "put_file", "shard"]
