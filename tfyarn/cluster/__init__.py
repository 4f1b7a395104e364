"""A real Hadoop cluster on loopback (one node or several), started from Maven Central's jars."""

from tfyarn.cluster.config import ClusterOptions
from tfyarn.cluster.layout import ClusterLayout
from tfyarn.cluster.local import ClusterStatus, LocalCluster

__all__ = ["ClusterLayout", "ClusterOptions", "ClusterStatus", "LocalCluster"]
