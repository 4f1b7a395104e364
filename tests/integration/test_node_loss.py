"""A node dies mid-training: its NodeManager and every process of its containers get SIGKILL.

With a restart policy that covers the lost tasks the job SUCCEEDS, and the
restarted tasks run on the node that is left, never on the dead one. The
jobs use `--placement spread`, which starts each role on the AM's node, so
the node the test kills (the other one) holds workers only; the AM's own
node is the job's single point of failure (`--max-attempts` covers it).

Each job trains until the test drops a marker file (in $HOME: node 2's
/tmp is its own), so the kill lands mid-training and the end is the test's.
"""
from __future__ import annotations

import json
import os
import signal
import textwrap
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from tests.integration.conftest import app_id_from, status_json, tfyarn, wait_for
from tests.integration.nodes import NODE2, ensure_nodes, ip, running_nodes, two_nodes  # noqa: F401

pytestmark = pytest.mark.disruptive  # kills a node: runs after the files whose jobs it could hit

MARKERS = Path.home() / ".tfyarn" / "test-markers"

PS_CHIEF = """
import os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf
from tfyarn.tensorflow import finish
marker = sys.argv[1]
strategy = tf.distribute.ParameterServerStrategy(tf.distribute.cluster_resolver.TFConfigClusterResolver())
coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
with strategy.scope():
    w = tf.Variable(0.0)
@tf.function
def step():
    w.assign_add(1.0)
    return w.read_value()
deadline = time.time() + 420
while not os.path.exists(marker) and time.time() < deadline:
    coordinator.schedule(step)
    coordinator.join()
    time.sleep(0.5)
print("MARKER SEEN" if os.path.exists(marker) else "NO MARKER", "steps", int(w.numpy()), flush=True)
finish(0 if os.path.exists(marker) else 3)  # TF's coordinator teardown hangs once a worker was lost
"""

DDP = """
import os, sys, time
import torch, torch.distributed as dist
marker = sys.argv[1]
dist.init_process_group("gloo")
print("RANK", dist.get_rank(), "ON", os.environ["NM_HOST"], flush=True)
deadline = time.time() + 420
while time.time() < deadline:
    flag = torch.tensor([1.0 if os.path.exists(marker) else 0.0])
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    if flag.item():
        break
    time.sleep(0.5)
print("DONE", dist.get_rank(), flush=True)
dist.destroy_process_group()
sys.exit(0 if os.path.exists(marker) else 3)
"""


def am_host(app: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:8088/ws/v1/cluster/apps/{app}", timeout=5) as r:
        return json.load(r)["app"]["amHostHttpAddress"].rpartition(":")[0]


def node_pids(address: str) -> list[int]:
    """The node's NodeManager and DataNode."""
    st = json.loads(tfyarn("cluster", "status", "--json").stdout)
    node = next(n for n in st["nodes"] if n["address"] == address)
    return [node["nodemanager_pid"], node["datanode_pid"]]


def kill_node(host: str) -> list[int]:
    """SIGKILL the node's NodeManager and DataNode (a lost node takes its disk along), then every
    process its containers left (NM_HOST names the node)."""
    killed = node_pids(ip(host))
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    marker = f"NM_HOST={host}\0".encode()
    for _ in range(3):  # a dying launcher may still fork: sweep until nothing is left
        for p in Path("/proc").glob("[0-9]*"):
            try:
                if marker in (p / "environ").read_bytes():
                    os.kill(int(p.name), signal.SIGKILL)
                    killed.append(int(p.name))
            except (OSError, ValueError):
                pass
        time.sleep(0.5)
    return killed


@pytest.fixture
def marker():
    MARKERS.mkdir(parents=True, exist_ok=True)
    path = MARKERS / uuid.uuid4().hex
    yield path
    path.unlink(missing_ok=True)


@pytest.fixture
def node_comes_back(two_nodes):
    yield
    ensure_nodes(2)  # `up` restarts the killed NodeManager
    wait_for("both nodes RUNNING again", lambda: len(running_nodes()) == 2, timeout_s=120)


def submit(tmp_path: Path, script: str, *flags: str) -> str:
    train = tmp_path / "train.py"
    train.write_text(textwrap.dedent(script))
    res = tfyarn("submit", "--placement", "spread", "--file", str(train), *flags, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    return app_id_from(res.stdout)


def running_everywhere(app: str, n: int) -> dict | None:
    doc = status_json(app)
    tasks = doc.get("tasks") or []
    return doc if len(tasks) == n and all(t["state"] == "RUNNING" and t["address"] for t in tasks) else None


def victim_of(doc: dict, app: str) -> str:
    """The node that does not run the AM (spread put each role's first task on the AM's node)."""
    home = am_host(app)
    hosts = {t["host"] for t in doc["tasks"]}
    assert len(hosts) == 2, f"spread left the tasks on {hosts}"
    return next(h for h in hosts if ip(h) != ip(home))


def final(app: str) -> dict:
    return wait_for(f"{app} to end", lambda: (d := status_json(app)).get("state") in
                    ("SUCCEEDED", "FAILED", "KILLED") and d, timeout_s=300, every_s=2)


def test_a_lost_node_under_on_failure_restarts_its_ps_worker_elsewhere_and_the_job_succeeds(
        tmp_path, marker, node_comes_back, yarn_apps):
    app = submit(tmp_path, PS_CHIEF, "--framework", "tensorflow", "--chief", "--num-ps", "1", "--num-workers", "2",
                 "--worker-restart", "on-failure", "--worker-restart-backoff", "1", "--worker-memory", "768m",
                 "--name", "it-node-loss-ps", "--", "python", "train.py", str(marker))
    yarn_apps.append(app)
    doc = wait_for("every task running", lambda: running_everywhere(app, 4), timeout_s=240)
    dead = victim_of(doc, app)
    lost = {t["name"] for t in doc["tasks"] if t["host"] == dead}
    assert lost == {"worker:1"}, f"spread from the AM's node should leave only worker:1 on {dead}: {lost}"
    kill_node(dead)
    moved = wait_for("worker:1 restarted and running on the other node",
                     lambda: next((t for t in status_json(app)["tasks"] if t["name"] == "worker:1"
                                   and t["restarts"] >= 1 and t["state"] == "RUNNING" and t["address"]), None),
                     timeout_s=240, every_s=2)
    assert ip(moved["host"]) != ip(dead)
    assert dead in " ".join(moved["history"]), moved["history"]
    marker.write_text("stop")
    end = final(app)
    assert end["state"] == "SUCCEEDED", end.get("diagnostics")
    tasks = {t["name"]: t for t in end["tasks"]}
    assert tasks["worker:1"]["restarts"] == 1 and ip(tasks["worker:1"]["host"]) != ip(dead)
    assert all(t["restarts"] == 0 for n, t in tasks.items() if n != "worker:1")


def test_a_lost_node_under_all_restarts_every_ddp_rank_on_the_node_left_and_the_job_succeeds(
        tmp_path, marker, node_comes_back, yarn_apps):
    app = submit(tmp_path, DDP, "--framework", "pytorch", "--num-workers", "2", "--worker-restart", "all",
                 "--worker-restart-backoff", "1", "--worker-memory", "768m", "--name", "it-node-loss-ddp",
                 "--", "python", "train.py", str(marker))
    yarn_apps.append(app)
    doc = wait_for("both ranks running", lambda: running_everywhere(app, 2), timeout_s=240)
    dead = victim_of(doc, app)
    kill_node(dead)
    marker.write_text("stop")  # the rank left blocks in its all_reduce until the AM restarts both
    end = final(app)
    assert end["state"] == "SUCCEEDED", end.get("diagnostics")
    assert end["job_restarts"] >= 1  # one, or two if a restart raced the RM's word of the lost node
    for t in end["tasks"]:
        assert ip(t["host"]) != ip(dead), t
        assert t["restarts"] == end["job_restarts"]
    lost_one = next(t for t in end["tasks"] if dead in " ".join(t["history"]))
    assert lost_one["history"], end["tasks"]


def test_the_ams_node_lost_with_max_attempts_2_the_job_reruns_on_the_node_left_and_succeeds(
        tmp_path, marker, node_comes_back, yarn_apps):
    """The AM's node is the job's single point of failure; a second attempt is its answer."""
    app = submit(tmp_path, DDP, "--framework", "pytorch", "--num-workers", "2", "--max-attempts", "2",
                 "--worker-memory", "768m", "--name", "it-node-loss-am", "--", "python", "train.py", str(marker))
    yarn_apps.append(app)
    wait_for("both ranks running", lambda: running_everywhere(app, 2), timeout_s=240)
    home = am_host(app)
    kill_node(home)
    marker.write_text("stop")
    end = final(app)
    assert end["state"] == "SUCCEEDED", end.get("diagnostics")
    assert end["attempt"] == 2
    assert all(ip(t["host"]) != ip(home) for t in end["tasks"]), end["tasks"]
