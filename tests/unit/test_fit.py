"""The allocation timeout's account of free resources: per node, and whether the missing containers fit."""

from __future__ import annotations

from appmaster.am.fit import explain, holds
from tfyarn.rmnodes import NodeCapacity
from tfyarn.spec import RoleSpec


def node(name: str, mem: int, cores: int, gpus: int, total_gpus: int = 4) -> NodeCapacity:
    return NodeCapacity(name, 16384, 16, total_gpus, "RUNNING", mem, cores, gpus)


WORKER_3GPU = RoleSpec("worker", 3, memory_mb=1024, vcores=1, gpus=3)


def test_a_node_holds_what_its_scarcest_free_resource_allows():
    assert holds(node("a", 8192, 16, 4), WORKER_3GPU) == 1
    assert holds(node("a", 8192, 16, 2), WORKER_3GPU) == 0
    assert holds(node("a", 512, 16, 4), WORKER_3GPU) == 0
    assert holds(node("a", 8192, 3, 0), RoleSpec("worker", 1, memory_mb=1024, vcores=1)) == 3  # no GPU asked


def test_the_issue_case_three_by_three_gpus_on_two_four_gpu_nodes_is_fragmentation():
    """Three 4-GPU nodes with one GPU left each: 3 GPUs free in total, yet no single node holds a 3-GPU worker."""
    nodes = [node("a:8041", 8192, 8, 1), node("b:8041", 8192, 8, 1), node("c:8041", 8192, 8, 1)]
    words = explain(nodes, {"worker": (1, WORKER_3GPU)})
    assert words.startswith("the cluster's 3 node(s) have 24576 MiB, 24 vcore(s) and 3 of 12 GPU(s) free (per node: ")
    assert words.endswith("worker needs 1 x (1024 MiB, 1 vcore(s), 3 GPU(s)) on single nodes and 0 fit: "
                          "enough is free in total, but a container cannot span nodes")


def test_too_little_in_total_is_said_so():
    words = explain([node("a:8041", 8192, 8, 1)], {"worker": (2, WORKER_3GPU)})
    assert words.endswith("worker needs 2 x (1024 MiB, 1 vcore(s), 3 GPU(s)) on single nodes and 0 fit: "
                          "the cluster has too little free")
    assert "per node" not in words  # one node: the total is the node


def test_what_fits_now_adds_nothing_and_no_nodes_say_nothing():
    assert explain([node("a:8041", 8192, 8, 4)], {"worker": (1, WORKER_3GPU)}) == (
        "the cluster's 1 node(s) have 8192 MiB, 8 vcore(s) and 4 of 4 GPU(s) free")
    assert explain([], {"worker": (1, WORKER_3GPU)}) == ""
