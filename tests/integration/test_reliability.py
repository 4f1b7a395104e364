"""Breaking things on the real cluster: gang timeouts, restart policies, kills, a lost node, a lost AM."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.integration.conftest import EXAMPLES, app_id_from, hadoop, status_json, tfyarn, wait_for
from tests.integration.procs import container_pids, job_processes, kill_9, wait_none_left
from tests.integration.nodes import ip, running_nodes
from tfyarn import nodegpus
from tfyarn.rest import fetch_json

PS_EXAMPLE = str(EXAMPLES / "tensorflow/ps_strategy/submit.sh")
DDP_EXAMPLE = str(EXAMPLES / "pytorch/ddp/submit.sh")


def start_example(script: str, flags: str, *args: str) -> tuple[subprocess.Popen[str], str]:
    """Run an example's submit.sh (it waits for the job); return the process and the app id."""
    env = {**os.environ, "TFYARN": f"{sys.executable} -m tfyarn", "TFYARN_SUBMIT_FLAGS": flags}
    proc = subprocess.Popen(["bash", script, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    return proc, app_id_from(proc.stdout.readline())  # type: ignore[union-attr]


def task(doc: dict, name: str) -> dict:
    return next(t for t in doc["tasks"] if t["name"] == name)


def training(app: str, log_task: str, marker: str, timeout_s: float = 180) -> dict:
    """The live status once ``log_task``'s log shows ``marker`` (training is under way)."""
    def ready() -> dict | None:
        log = tfyarn("logs", app, "--task", log_task)
        return status_json(app) if marker in log.stdout else None
    return wait_for(f"{marker!r} in {log_task}'s log", ready, timeout_s, every_s=2)


def kill_task(app: str, name: str, needle: str) -> str:
    """SIGKILL ``name``'s user process (``needle`` in its command line) in its current container."""
    seen: dict[str, object] = {}

    def found() -> str | None:
        cid = task(status_json(app), name)["yarn_container_id"]
        pids = container_pids(cid, needle) if cid else []
        seen.update(container=cid, pids=pids, every_process_of_it=job_processes(app))
        return cid if cid and len(pids) == 1 else None
    try:
        cid = wait_for(f"{name}'s {needle} process", found, timeout_s=60)
    except AssertionError as e:  # say what was there instead: none, or several
        raise AssertionError(f"{e}; last seen: {seen}") from None
    kill_9(cid, needle)
    return cid


def gpus_in_use(cluster) -> int:  # type: ignore[no-untyped-def]
    nodes = fetch_json(f"{cluster.layout.rm_web}/ws/v1/cluster/nodes")["nodes"]["node"]
    return sum(nodegpus.resource_gpus(n.get("usedResource")) for n in nodes)


@pytest.mark.exclusive  # asserts every node's free GPUs
def test_more_gpus_than_free_fails_after_the_allocation_timeout_and_holds_nothing(cluster, yarn_apps):
    """One more 3-GPU worker than the cluster's 4-GPU nodes: each node holds one, the last fits nowhere."""
    nodes = len(running_nodes())
    t0 = time.monotonic()
    res = tfyarn("submit", "--name", "too-many-gpus", "--num-workers", str(nodes + 1), "--worker-gpus", "3",
                 "--worker-memory", "512m", "--allocation-timeout", "15", "--wait",
                 "--", "python", "-c", "import time; time.sleep(600)", timeout=300)
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 4, res.stdout + res.stderr
    assert time.monotonic() - t0 < 120
    diag = status_json(app)["diagnostics"]
    assert (f"1 of {nodes + 1} worker container(s) not allocated after 15 s "
            "(each asks 512 MiB, 1 vcore(s), 3 GPU(s))") in diag
    assert f"{nodes} of {4 * nodes} GPU(s) free" in diag, diag  # 4 stand-in GPUs per node, 3 held by a worker
    assert ("worker needs 1 x (512 MiB, 1 vcore(s), 3 GPU(s)) on single nodes and 0 fit: "
            "the cluster has too little free") in diag, diag
    wait_for("the job's GPUs to be released", lambda: gpus_in_use(cluster) == 0, timeout_s=30)
    app_info = fetch_json(f"{cluster.layout.rm_web}/ws/v1/cluster/apps/{app}")["app"]
    assert app_info["runningContainers"] <= 0 and app_info["allocatedMB"] <= 0, app_info
    assert wait_none_left(app) == []


def test_ps_worker_killed_is_restarted_on_failure_and_the_job_succeeds(cluster, yarn_apps):
    proc, app = start_example(PS_EXAMPLE, "--worker-restart on-failure", "--epochs", "300",
                              "--model-dir", "/tmp/tfyarn-restart-test")
    yarn_apps.append(app)
    training(app, "chief:0", "epoch 1")
    killed = kill_task(app, "worker:1", "appmaster.executor.tf_server")
    out, err = proc.communicate(timeout=400)
    assert proc.returncode == 0, out + err
    doc = status_json(app)
    assert doc["state"] == "SUCCEEDED"
    restarted = task(doc, "worker:1")
    assert restarted["restarts"] == 1 and restarted["yarn_container_id"] != killed, restarted
    assert restarted["history"][0].startswith(killed) and "exit code 137" in restarted["history"][0]
    assert task(doc, "worker:0")["restarts"] == 0
    table = tfyarn("status", app).stdout
    assert any(l.startswith("worker:1") and " 1 " in l for l in table.splitlines()), table  # RESTARTS column


def kill_fails_the_job_fast(yarn_apps: list[str], task_name: str, program: str, model_dir: str) -> None:
    """kill -9 of ``task_name``'s ``program`` mid-training (policy never): FAILED within 30 s naming it, nothing left."""
    proc, app = start_example(PS_EXAMPLE, "", "--epochs", "100000", "--model-dir", model_dir)
    yarn_apps.append(app)
    training(app, "chief:0", "epoch 0")
    kill_task(app, task_name, program)
    t0 = time.monotonic()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 4 and f"task {task_name} failed (exit code 137)" in out, out + err
    assert time.monotonic() - t0 < 30
    assert wait_none_left(app, timeout_s=30) == []


def test_ps_worker_killed_with_never_fails_the_job_naming_it(cluster, yarn_apps):
    kill_fails_the_job_fast(yarn_apps, "worker:1", "appmaster.executor.tf_server", "/tmp/tfyarn-never-test")


def test_ddp_rank_killed_restarts_every_rank_and_the_job_succeeds(cluster, yarn_apps):
    proc, app = start_example(DDP_EXAMPLE, "--worker-restart all --worker-restart-backoff 1",
                              "--epochs", "120", "--samples", "8192", "--model-dir", "/tmp/tfyarn-ddp-restart")
    yarn_apps.append(app)
    doc = training(app, "worker:0", "epoch 0")
    first = {t["name"]: t["yarn_container_id"] for t in doc["tasks"]}
    assert kill_task(app, "worker:1", "train.py") == first["worker:1"]
    out, err = proc.communicate(timeout=400)
    assert proc.returncode == 0, out + err
    doc = status_json(app)
    assert doc["state"] == "SUCCEEDED" and doc["job_restarts"] == 1
    for t in doc["tasks"]:
        assert t["restarts"] == 1 and t["yarn_container_id"] != first[t["name"]], t
    results = [l for l in tfyarn("logs", app, "--task", "worker:0").stdout.splitlines()
               if l.startswith("TFYARN_RESULT ")]
    assert json.loads(results[-1].split(" ", 1)[1])["world_size"] == 2


def test_chief_killed_fails_fast_and_leaves_no_process(cluster, yarn_apps):
    kill_fails_the_job_fast(yarn_apps, "chief:0", "train.py", "/tmp/tfyarn-chief-test")


def test_yarn_application_kill_leaves_no_process(cluster, yarn_apps):
    proc, app = start_example(PS_EXAMPLE, "", "--epochs", "100000", "--model-dir", "/tmp/tfyarn-ykill-test")
    yarn_apps.append(app)
    training(app, "chief:0", "epoch 0")
    assert job_processes(app)
    kill = hadoop(cluster, "yarn", "application", "-kill", app)
    assert kill.returncode == 0, kill.stderr
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 4 and "KILLED" in out, out + err
    assert wait_none_left(app, timeout_s=30) == []


def test_second_am_attempt_reruns_the_whole_job(cluster, yarn_apps):
    res = tfyarn("submit", "--name", "am-restart", "--max-attempts", "2", "--num-workers", "2",
                 "--worker-memory", "512m", "--", "python", "-c", "import time; time.sleep(15); print('done')")
    assert res.returncode == 0, res.stderr
    app = app_id_from(res.stdout)
    yarn_apps.append(app)
    wait_for("both tasks running", lambda: (d := status_json(app)).get("tasks") and all(
        t["state"] == "RUNNING" for t in d["tasks"]), timeout_s=120)
    first = {t["name"]: t["yarn_container_id"] for t in status_json(app)["tasks"]}
    am_container = next(iter(first.values())).rsplit("_", 1)[0] + "_000001"
    pids = container_pids(am_container, "com.anaconda.skein.ApplicationMaster", program="java")
    assert len(pids) == 1, pids
    os.kill(pids[0], signal.SIGKILL)
    doc = wait_for("the second attempt to succeed",
                   lambda: (d := status_json(app))["state"] in ("SUCCEEDED", "FAILED") and d, timeout_s=240)
    assert doc["state"] == "SUCCEEDED", doc["diagnostics"]
    assert doc["attempt"] == 2
    assert all(t["yarn_container_id"] not in first.values() for t in doc["tasks"])  # all tasks ran again
    assert wait_none_left(app) == []


@pytest.mark.disruptive
def test_node_manager_silent_past_its_expiry_ends_the_job_failed(cluster, yarn_apps):
    res = tfyarn("submit", "--name", "node-lost", "--num-workers", "1", "--worker-memory", "512m",
                 "--", "python", "-c", "import time; time.sleep(300)")
    assert res.returncode == 0, res.stderr
    app = app_id_from(res.stdout)
    yarn_apps.append(app)
    wait_for("the task running", lambda: (d := status_json(app)).get("tasks") and d["tasks"][0]["state"] == "RUNNING",
             timeout_s=120)
    host = status_json(app)["tasks"][0]["host"]  # its node: with two, not always node 1
    nodes = json.loads(tfyarn("cluster", "status", "--json").stdout)["nodes"]
    nm_pid = next(n["nodemanager_pid"] for n in nodes if n["address"] == ip(host))
    os.kill(nm_pid, signal.SIGSTOP)  # alive but silent: the RM expires it after 20 s
    try:
        t0 = time.monotonic()
        rep = wait_for("the job to end", lambda: (d := status_json(app))["state"] != "RUNNING" and d, timeout_s=120)
        assert rep["state"] == "FAILED", rep
        assert "lost" in rep["diagnostics"].lower(), rep["diagnostics"]
        assert time.monotonic() - t0 < 90
    finally:
        os.kill(nm_pid, signal.SIGCONT)
    # Back, the NodeManager resyncs and stops the dead job's containers.
    wait_for("every NodeManager RUNNING again", lambda: len(running_nodes()) == len(nodes), timeout_s=120, every_s=2)
    assert wait_none_left(app, timeout_s=60) == []
