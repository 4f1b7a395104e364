"""Extra nodes of the local cluster: per-node config, dirs, count, private /tmp and status lines."""
from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest

from tfyarn.cluster import ClusterLayout, ClusterOptions, daemons, nodes
from tfyarn.cluster.config import config_files, core_site, hdfs_site, yarn_site
from tfyarn.cluster.nodestatus import NodeState, describe, node_states
from tfyarn.rmnodes import NodeCapacity

LAYOUT = ClusterLayout(root=Path("/c"), jar_cache=Path("/j"))
NM_ADDRESS_KEYS = ("yarn.nodemanager.address", "yarn.nodemanager.localizer.address",
                   "yarn.nodemanager.webapp.address")


def test_node_one_keeps_the_single_node_paths_and_address():
    one = LAYOUT.for_node(1)
    assert one == LAYOUT
    assert (one.host, one.conf_dir, one.log_dir, one.pid_dir, one.nm_local_dir) == (
        "127.0.0.1", Path("/c/conf"), Path("/c/logs"), Path("/c/pids"), Path("/c/data/nm-local"))
    y = yarn_site(one, ClusterOptions())
    assert y["yarn.nodemanager.hostname"] == "127.0.0.1"
    assert [y[k] for k in NM_ADDRESS_KEYS] == ["127.0.0.1:8041", "127.0.0.1:8040", "127.0.0.1:8042"]


def test_an_extra_node_has_its_own_address_dirs_and_gpus_but_the_same_masters():
    two = LAYOUT.for_node(2)
    opts = ClusterOptions(memory_mb=4096, vcores=2, gpus=3)
    y, y1 = yarn_site(two, opts), yarn_site(LAYOUT, opts)
    assert y["yarn.nodemanager.hostname"] == "127.0.0.2"
    assert [y[k] for k in NM_ADDRESS_KEYS] == ["127.0.0.2:8041", "127.0.0.2:8040", "127.0.0.2:8042"]
    assert y["yarn.nodemanager.local-dirs"] == "/c/nodes/2/data/nm-local"
    assert y["yarn.nodemanager.log-dirs"] == "/c/nodes/2/logs/containers"
    assert y["yarn.nodemanager.resource-plugins.gpu.path-to-discovery-executables"] == \
        "/c/nodes/2/gpu-discovery/nvidia-smi"
    assert y["yarn.application.classpath"] == "/c/nodes/2/conf,/j/lib/*"
    # Everything but the node's own settings is node 1's: one RM, one HDFS, the same sizes per node.
    own = {"yarn.nodemanager.hostname", *NM_ADDRESS_KEYS, "yarn.nodemanager.local-dirs",
           "yarn.nodemanager.log-dirs", "yarn.application.classpath",
           "yarn.nodemanager.resource-plugins.gpu.path-to-discovery-executables"}
    assert {k: v for k, v in y.items() if k not in own} == {k: v for k, v in y1.items() if k not in own}
    assert y["yarn.resourcemanager.resource-tracker.address"] == "127.0.0.1:8031"
    assert y["yarn.nodemanager.resource.memory-mb"] == "4096"
    assert core_site(two)["fs.defaultFS"] == "hdfs://127.0.0.1:9000"
    assert core_site(two)["hadoop.tmp.dir"] == "/c/nodes/2/data/tmp"
    assert hdfs_site(two)["dfs.namenode.rpc-address"] == "127.0.0.1:9000"
    files = config_files(two, opts)
    assert all(str(p).startswith("/c/nodes/2/") for p in files)
    smi = files[Path("/c/nodes/2/gpu-discovery/nvidia-smi")]
    assert smi.count("<minor_number>") == 3


def test_nodes_are_one_to_eight():
    assert LAYOUT.for_node(8).host == "127.0.0.8"
    for bad in (0, 9):
        with pytest.raises(ValueError):
            LAYOUT.for_node(bad)


def test_the_count_is_remembered_and_a_bad_file_means_one(tmp_path):
    lay = ClusterLayout(root=tmp_path, jar_cache=tmp_path / "j")
    assert nodes.remembered_count(lay) == 1
    nodes.remember_count(lay, 3)
    assert nodes.remembered_count(lay) == 3
    nodes.count_file(lay).write_text("lots\n")
    assert nodes.remembered_count(lay) == 1


def test_extra_nodes_are_the_numbered_dirs(tmp_path):
    lay = ClusterLayout(root=tmp_path, jar_cache=tmp_path / "j")
    for name in ("2", "3", "x", "1", "99"):
        (lay.nodes_dir / name).mkdir(parents=True)
    (lay.nodes_dir / "count").write_text("2\n")
    assert daemons.extra_nodes(lay) == [2, 3]


def test_keep_paths_are_the_outermost_dirs_under_tmp(tmp_path):
    base = Path("/tmp") / f"tfyarn-keep-{uuid.uuid4().hex}"
    try:
        for d in ("a/b", "c", "a/b/d"):
            (base / d).mkdir(parents=True)
        cands = [str(base / "a"), str(base / "a/b/d"), str(base / "c"), "/usr", "/tmp", "", "rel", str(base / "no")]
        assert nodes.keep_paths(LAYOUT, cands) == [str(base / "a"), str(base / "c")]
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=True)


def test_a_command_under_the_wrapper_has_its_own_tmp_and_still_sees_the_cluster(tmp_path):
    problem = nodes.unshare_problem()
    if problem and os.geteuid() != 0:  # unshare --mount needs root; as root (CI, the dev box) it must work
        pytest.skip(f"no private mount namespace without root: {problem}")
    assert not problem, f"unshare --mount fails as root: {problem}"
    root = Path("/tmp") / f"tfyarn-node-{uuid.uuid4().hex}"  # a cluster dir under /tmp: the hard case
    lay = ClusterLayout(root=root, jar_cache=tmp_path / "jars").for_node(2)
    name = f"tfyarn-private-{uuid.uuid4().hex}"
    try:
        nodes.write_wrapper(lay)
        probe = f"echo node2 > /tmp/{name} && cat {nodes.wrapper_path(lay)} >/dev/null && readlink /proc/self/ns/mnt"
        res = subprocess.run([*nodes.private_tmp_wrapper(lay), "sh", "-c", probe], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        assert res.stdout.strip() != os.readlink("/proc/self/ns/mnt")
        assert not Path(f"/tmp/{name}").exists()
        assert (lay.private_tmp / name).read_text() == "node2\n"
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=True)
        Path(f"/tmp/{name}").unlink(missing_ok=True)


def test_status_lists_each_node_with_what_the_rm_says(tmp_path):
    lay = ClusterLayout(root=tmp_path, jar_cache=tmp_path / "j")
    rm = [NodeCapacity("127.0.0.2:8041", 4096, 4, 2, "LOST"),
          NodeCapacity("127.0.0.1:8041", 8192, 8, 4, "RUNNING", 6144, 7, 3, 2048, 1, 1, 2)]
    states = node_states(lay, 3, rm)
    assert [(s.node, s.address, s.state) for s in states] == [
        (1, "127.0.0.1", "RUNNING"), (2, "127.0.0.2", "LOST"), (3, "127.0.0.3", None)]
    one = states[0]
    assert (one.memory_used_mb, one.memory_mb, one.gpus_used, one.gpus, one.containers) == (2048, 8192, 1, 4, 2)
    assert "memory 2048/8192 MB" in describe(one) and "2 container(s)" in describe(one)
    assert "no word of it from the ResourceManager" in describe(states[2])
    line = describe(NodeState(2, "127.0.0.2", 42, True, "RUNNING", 1, 0, 1, 0, 0, 0, 0))
    assert "private /tmp" in line and "pid 42" in line


def test_node_one_is_found_under_the_name_the_rm_gives_it():
    from tfyarn.cluster.nodestatus import same_host
    assert same_host("localhost", "127.0.0.1") and same_host("127.0.0.2", "127.0.0.2")
    assert not same_host("localhost", "127.0.0.2") and not same_host("no-such-host.invalid", "127.0.0.1")
    rm = [NodeCapacity("localhost:8041", 8192, 8, 4, "RUNNING")]
    assert node_states(LAYOUT, 1, rm)[0].state == "RUNNING"
