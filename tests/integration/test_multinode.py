"""Two nodes on one machine: node 2 is its own host (127.0.0.2) with its own dirs, GPUs and /tmp.

The `two_nodes` fixture (tests/integration/nodes.py) gives the suite's
cluster its two nodes when it has fewer.
"""
import json
import urllib.request
import uuid
from pathlib import Path

import pytest

from tests.integration.conftest import app_id_from, status_json, tfyarn, wait_for
from tests.integration.nodes import NODE2, ensure_nodes, gpus_of, ip, rm_nodes, running_nodes, two_nodes  # noqa: F401


def test_the_rm_lists_two_running_nodes_with_their_own_addresses_and_gpus(two_nodes):
    running = running_nodes()
    assert set(running) == {"127.0.0.1", NODE2}
    assert running[NODE2]["id"] == f"{NODE2}:8041" and running[NODE2]["nodeHTTPAddress"] == f"{NODE2}:8042"
    assert [gpus_of(n) for n in running.values()] == [4, 4]
    with urllib.request.urlopen(f"http://{NODE2}:8042/ws/v1/node/resources/yarn.io%2Fgpu", timeout=5) as r:
        gpus = json.load(r)["gpuDeviceInformation"]["gpu"]
    assert sorted(g["minor_number"] for g in gpus) == [0, 1, 2, 3]
    node2 = two_nodes.layout.for_node(2)
    assert (node2.conf_dir / "yarn-site.xml").exists() and node2.nm_local_dir.is_dir()


def test_cluster_status_lists_each_node(two_nodes):
    res = tfyarn("cluster", "status", "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    st = json.loads(res.stdout)
    assert st["node_count"] == 2 and st["running_nodemanagers"] == 2
    nodes = {n["address"]: n for n in st["nodes"]}
    assert set(nodes) == {"127.0.0.1", NODE2}
    for n in nodes.values():
        assert n["state"] == "RUNNING" and n["gpus"] == 4 and n["nodemanager_pid"] > 0
    assert nodes[NODE2]["private_tmp"] is True and nodes["127.0.0.1"]["private_tmp"] is False
    text = tfyarn("cluster", "status").stdout
    assert "node 2  127.0.0.2" in text and "private /tmp" in text


def test_a_two_worker_job_spreads_over_both_nodes_each_task_on_its_own_address(two_nodes, yarn_apps):
    """Each worker asks for 3 of a node's 4 GPUs, so no node holds both and YARN must spread them.

    (Memory alone cannot force it: node 1 offers 16 GiB and a container gets at most 8 GiB.)
    Each task also writes /tmp/<tag>-<its node>: node 2's lands in node 2's private /tmp.
    """
    tag = f"tfyarn-mn-{uuid.uuid4().hex}"
    code = ("import os; print('TF_CONFIG=' + os.environ['TF_CONFIG']); print('NM_HOST=' + os.environ['NM_HOST']); "
            f"open('/tmp/{tag}-' + os.environ['NM_HOST'], 'w').write('x')")
    res = tfyarn("submit", "--framework", "tensorflow", "--num-workers", "2", "--worker-memory", "512m",
                 "--worker-gpus", "3", "--name", "it-multinode", "--wait", "--", "python", "-c", code)
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    try:
        assert res.returncode == 0, res.stdout + res.stderr
        tasks = status_json(app)["tasks"]
        assert sorted(ip(t["host"]) for t in tasks) == ["127.0.0.1", NODE2]
        for t in tasks:
            log = wait_for(f"{t['name']}'s output", lambda t=t: _task_output(app, t["name"]), timeout_s=60)
            tf_config = json.loads(log["TF_CONFIG"])
            me = tf_config["cluster"][tf_config["task"]["type"]][tf_config["task"]["index"]]
            assert me.rpartition(":")[0] == t["host"] == log["NM_HOST"], (t, log)
            assert t["address"] == me
        node1 = next(t["host"] for t in tasks if ip(t["host"]) == "127.0.0.1")  # NM_HOST as node 1 names it
        node2_tmp = two_nodes.layout.for_node(2).private_tmp
        assert Path(f"/tmp/{tag}-{node1}").read_text() == "x"  # node 1 shares the machine's /tmp
        assert not Path(f"/tmp/{tag}-{NODE2}").exists()  # node 2's task wrote into its own /tmp
        assert (node2_tmp / f"{tag}-{NODE2}").read_text() == "x"
        assert not list(node2_tmp.glob(f"{tag}-*[!2]"))  # and did not see node 1's file there
    finally:
        for f in [*Path("/tmp").glob(f"{tag}-*"), *two_nodes.layout.for_node(2).private_tmp.glob(f"{tag}-*")]:
            f.unlink()


def _task_output(app: str, task: str) -> dict[str, str] | None:
    res = tfyarn("logs", app, "--task", task)
    found = dict(line.split("=", 1) for line in res.stdout.splitlines() if line.startswith(("TF_CONFIG=", "NM_HOST=")))
    return found if len(found) == 2 else None


@pytest.mark.disruptive  # stops node 2 while other files' jobs might run there: runs after them
def test_up_with_fewer_nodes_stops_node_2_and_the_rm_drops_it(two_nodes):
    res = tfyarn("cluster", "up", "--nodes", "1")
    try:
        _check_node_2_stopped(res)
    finally:
        ensure_nodes(2)  # the suite's default


def _check_node_2_stopped(res) -> None:
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Stopped node 2" in res.stderr
    node2 = wait_for("the RM to stop listing node 2 as RUNNING",
                     lambda: [n for n in rm_nodes() if ip(n["nodeHostName"]) == NODE2 and n["state"] != "RUNNING"]
                     or not any(ip(n["nodeHostName"]) == NODE2 for n in rm_nodes()), timeout_s=60)
    if isinstance(node2, list):
        assert node2[0]["state"] in ("SHUTDOWN", "LOST", "DECOMMISSIONED")
    st = json.loads(tfyarn("cluster", "status", "--json").stdout)
    assert st["node_count"] == 1 and [n["address"] for n in st["nodes"]] == ["127.0.0.1"]
    assert st["running_nodemanagers"] == 1
