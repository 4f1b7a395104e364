"""What every cluster benchmark does first: fail loudly, with the fix, when the local cluster is down."""
from __future__ import annotations

import os
import sys

from tfyarn import protocol
from tfyarn.cluster import LocalCluster


def fail(script: str, msg: str) -> None:
    print(f"benchmarks/{script}: {msg}", file=sys.stderr)
    sys.exit(2)


def require_cluster(script: str) -> LocalCluster:
    """The running local cluster, with HADOOP_CONF_DIR pointing at it; else exit 2 saying how to start it."""
    cluster = LocalCluster()
    if not cluster.status().running:
        fail(script, "the local cluster is not running; start it with `tfyarn cluster up` (or `make up`)")
    os.environ[protocol.ENV_HADOOP_CONF_DIR] = str(cluster.layout.conf_dir)
    return cluster
