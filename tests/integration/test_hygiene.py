"""No process of a job outlives it: after success (parameter servers too), after `tfyarn kill`."""
from __future__ import annotations

import pytest

import json
import os
import subprocess
import sys

from tests.integration.conftest import EXAMPLES, TFYARN, app_id_from, hadoop, wait_for
from tests.integration.procs import job_processes, wait_none_left

# Needs the cluster to itself (tests/integration/conftest.py, Makefile's two phases): counts every application on the cluster before and after.
pytestmark = pytest.mark.exclusive


def status(app_id: str) -> dict:
    res = subprocess.run([*TFYARN, "status", "--json", app_id], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_ps_job_leaves_nothing_after_success(cluster, yarn_apps):
    res = subprocess.run([*TFYARN, "submit", "--framework", "tensorflow", "--chief", "--num-workers", "1",
                          "--num-ps", "1", "--worker-memory", "1g", "--ps-memory", "1g", "--chief-memory", "512m",
                          "--wait", "--", "python", "-c", "import time; time.sleep(3)"],
                         capture_output=True, text=True, timeout=300)
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 0, res.stdout + res.stderr
    assert wait_none_left(app) == []
    # per-task detail of a finished job comes from the AM's aggregated log, seconds after its end
    doc = wait_for("the finished job's tasks", lambda: (d := status(app))["tasks"] and d, timeout_s=30, every_s=2)
    tasks = {t["name"]: t["state"] for t in doc["tasks"]}
    assert tasks == {"chief:0": "SUCCEEDED", "worker:0": "KILLED", "ps:0": "KILLED"}


def test_kill_stops_every_process_of_a_training_job(cluster, yarn_apps):
    env = {**os.environ, "TFYARN": f"{sys.executable} -m tfyarn"}
    proc = subprocess.Popen(["bash", str(EXAMPLES / "tensorflow/ps_strategy/submit.sh"), "--epochs", "100000",
                             "--model-dir", "/tmp/tfyarn-kill-test"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    app = app_id_from(first)
    yarn_apps.append(app)
    wait_for("training to start (epoch 0 in the chief's log)", lambda: "epoch 0" in subprocess.run(
        [*TFYARN, "logs", app, "--task", "chief:0"], capture_output=True, text=True).stdout, timeout_s=180, every_s=2)
    live = status(app)
    assert {t["name"]: t["state"] for t in live["tasks"]} == {
        "chief:0": "RUNNING", "worker:0": "RUNNING", "worker:1": "RUNNING", "ps:0": "RUNNING"}
    ps_log = subprocess.run([*TFYARN, "logs", app, "--task", "ps:0"], capture_output=True, text=True).stdout
    assert "TensorFlow server ps:0 serving" in ps_log
    assert any("tf_server" in p for p in job_processes(app))

    kill = subprocess.run([*TFYARN, "kill", app], capture_output=True, text=True)
    assert kill.returncode == 0, kill.stderr
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 4, out + err
    assert "KILLED" in out
    assert wait_none_left(app) == []


def test_logs_follow_streams_a_running_task(cluster, yarn_apps):
    script = "import time\nfor i in range(6):\n    print('tick', i, flush=True)\n    time.sleep(1)\n"
    sub = subprocess.run([*TFYARN, "submit", "--worker-memory", "512m", "--", "python", "-c", script],
                         capture_output=True, text=True)
    app = app_id_from(sub.stdout)
    yarn_apps.append(app)
    follow = subprocess.run([*TFYARN, "logs", app, "--task", "worker:0", "--follow"],
                            capture_output=True, text=True, timeout=120)
    assert follow.returncode == 0, follow.stderr
    assert [l for l in follow.stdout.splitlines() if l.startswith("tick")] == [f"tick {i}" for i in range(6)]


def test_more_gpus_than_any_node_is_refused_before_submission(cluster):
    before = hadoop(cluster, "yarn", "application", "-list", "-appStates", "ALL").stdout.count("application_")
    res = subprocess.run([*TFYARN, "submit", "--worker-gpus", "5", "--", "python", "-c", "pass"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.strip().splitlines() == [
        "Error: --worker-gpus: each worker container asks 5 GPU(s) (yarn.io/gpu), but the largest node offers 4; "
        "ask for at most 4"]
    after = hadoop(cluster, "yarn", "application", "-list", "-appStates", "ALL").stdout.count("application_")
    assert after == before
