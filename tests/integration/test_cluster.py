"""The local cluster itself: four real daemons (and node 2's NodeManager), their commands, an idempotent `up`."""
import json
import urllib.request

import pytest

from tests.integration.conftest import hadoop, tfyarn
from tests.integration.nodes import running_nodes

# Needs the cluster to itself (tests/integration/conftest.py, Makefile's two phases): runs `tfyarn cluster up`/status on the shared cluster.
pytestmark = pytest.mark.exclusive


def test_status_lists_four_running_daemons(cluster):
    res = tfyarn("cluster", "status")
    assert res.returncode == 0, res.stdout + res.stderr
    for name in ("namenode", "datanode", "resourcemanager", "nodemanager"):
        assert f"{name}" in res.stdout and "running (pid" in res.stdout
    data = json.loads(tfyarn("cluster", "status", "--json").stdout)
    assert data["running_nodemanagers"] == len(running_nodes()) == data["node_count"] == data["live_datanodes"]
    assert data["hdfs_safemode"] is False


def test_rm_web_ui_answers_on_8088(cluster):
    with urllib.request.urlopen("http://127.0.0.1:8088/ws/v1/cluster/info", timeout=5) as r:
        info = json.load(r)["clusterInfo"]
    assert info["state"] == "STARTED"
    assert info["hadoopVersion"] == "3.5.0"


def test_gpus_are_a_scheduled_resource(cluster):
    with urllib.request.urlopen("http://127.0.0.1:8088/ws/v1/cluster/nodes", timeout=5) as r:
        node = json.load(r)["nodes"]["node"][0]
    infos = node["totalResource"]["resourceInformations"]["resourceInformation"]
    assert {i["name"]: i["value"] for i in infos}["yarn.io/gpu"] == 4
    with urllib.request.urlopen("http://127.0.0.1:8042/ws/v1/node/resources/yarn.io%2Fgpu", timeout=5) as r:
        gpus = json.load(r)["gpuDeviceInformation"]["gpu"]
    assert sorted(g["minor_number"] for g in gpus) == [0, 1, 2, 3]


def test_up_is_idempotent(cluster):
    before = {d.name: d.pid for d in cluster.status().daemons}
    res = tfyarn("cluster", "up")
    assert res.returncode == 0, res.stderr
    extra_nodes = len(running_nodes()) - 1  # each one's NodeManager says so too
    assert res.stderr.count("already running") == 4 + extra_nodes
    assert {d.name: d.pid for d in cluster.status().daemons} == before


def test_hadoop_commands(cluster):
    cp = hadoop(cluster, "yarn", "classpath", "--glob")
    assert cp.returncode == 0 and "hadoop-common-3.5.0.jar" in cp.stdout
    nodes = hadoop(cluster, "yarn", "node", "-list")
    assert nodes.returncode == 0 and "RUNNING" in nodes.stdout
    assert f"{cluster.layout.lib_dir}/*" in hadoop(cluster, "hadoop", "classpath").stdout
    env = tfyarn("cluster", "env").stdout
    assert f"export HADOOP_CONF_DIR={cluster.layout.conf_dir}" in env and "export JAVA_HOME=" in env
