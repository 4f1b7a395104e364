"""Elastic PyTorch on the two-node cluster: it starts with what fits, grows when capacity frees, and a lost
worker is replaced alone while the others train on from their checkpoints."""
from __future__ import annotations

import pytest

import os
import signal
import uuid
from typing import Any

import torch

from tests.integration.conftest import EXAMPLES, app_id_from, results, status_json, tfyarn, wait_for
from tests.integration.nodes import running_nodes, two_nodes  # noqa: F401  (a fixture)
from tests.integration.procs import container_pids, wait_none_left
from tests.integration.test_reliability import start_example, task

ELASTIC = str(EXAMPLES / "pytorch/elastic/submit.sh")
STEPS = 400

# Needs the cluster to itself (tests/integration/conftest.py, Makefile's two phases): exact free room on each node.
pytestmark = pytest.mark.exclusive


def world(app: str, size: int) -> Any:
    """A check: the job's live status once its world size is ``size``."""
    def check() -> dict | None:
        doc = status_json(app)
        return doc if doc["world_size"] == size else None  # null until the AM publishes
    return check


def step(t: dict) -> int:
    """A task's last reported training step (tfyarn.report.progress), 0 before any."""
    return int((t.get("progress") or {}).get("step") or 0)


def test_elastic_job_grows_when_capacity_frees_and_replaces_a_lost_worker_alone(two_nodes, yarn_apps, tmp_path):
    memory = {int(n["totalResource"]["memory"]) for n in running_nodes().values()}
    assert memory == {16384}, f"the sizes below are for two 16 GiB nodes, not {memory}"
    # Another application holds 14 of one node's 16 GiB (two 7 GiB containers, packed on one node; a container
    # is at most 8 GiB here): of the 6 GiB workers, two fit, on the other node.
    held = tfyarn("submit", "--name", "capacity-holder", "--num-workers", "2", "--worker-memory", "7g",
                  "--placement", "pack", "--", "python", "-c", "import time; time.sleep(1200)")
    assert held.returncode == 0, held.stdout + held.stderr
    holder = app_id_from(held.stdout + held.stderr)
    yarn_apps.append(holder)

    def holding() -> set[str] | None:
        tasks = status_json(holder)["tasks"] or []  # null until the AM publishes
        return {t["host"] for t in tasks} if len(tasks) == 2 and all(t["address"] for t in tasks) else None
    hosts = wait_for("the holder's two containers", holding, timeout_s=180)
    assert len(hosts) == 1, f"--placement pack put the holder on {hosts}"

    out_uri = f"hdfs:///tmp/tfyarn-elastic-{uuid.uuid4().hex[:8]}"
    proc, app = start_example(ELASTIC, f"--worker-memory 6g --output ./model:{out_uri}",
                              "--steps", str(STEPS), "--step-seconds", "0.4")
    yarn_apps.append(app)
    doc = wait_for("training with the 2 workers that fit", world(app, 2), timeout_s=300, every_s=2)
    # A few steps by the group of 2 before it can grow (under load its first step can come late).
    doc = wait_for("3 steps by the group of 2", lambda: (d := world(app, 2)()) and all(
        step(t) >= 3 for t in d["tasks"] if t["name"] != "worker:2") and d, timeout_s=300, every_s=1)
    assert doc["elastic"] == "2:3"
    assert task(doc, "worker:2")["state"] in ("WAITING", "REQUESTED"), doc["tasks"]

    killed = tfyarn("kill", holder)
    assert killed.returncode == 0, killed.stderr
    doc = wait_for("world size 3 once the holder is gone", world(app, 3), timeout_s=300, every_s=2)
    # Training under way in the group of 3: every member a few steps past where the round began.
    begun = max(step(t) for t in doc["tasks"])

    def trained() -> dict | None:
        d = status_json(app)
        return d if d["world_size"] == 3 and all(step(t) >= begun + 5 for t in d["tasks"]) else None
    doc = wait_for("5 steps by the group of 3", trained, timeout_s=300, every_s=1)
    victim = task(doc, "worker:1")
    assert victim["restarts"] == 0

    # Every process of worker:1's container, as a lost node would take them (torchrun's workers too).
    pids = container_pids(victim["yarn_container_id"], "")
    assert pids, f"no process of {victim['yarn_container_id']} on this machine"
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def replaced() -> dict | None:
        d = status_json(app)
        t = task(d, "worker:1")
        return d if t["restarts"] == 1 and t["address"] and d["world_size"] == 3 and d["time"] > 0 else None
    wait_for("a replacement worker:1 back in a group of 3", replaced, timeout_s=300, every_s=2)

    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, out[-3000:] + err[-3000:]
    doc = status_json(app)
    assert doc["state"] == "SUCCEEDED", doc["diagnostics"]
    # YARN restarted only the lost one: the others trained on (their agents re-formed the group)
    assert {t["name"]: t["restarts"] for t in doc["tasks"]} == {"worker:0": 0, "worker:1": 1, "worker:2": 0}
    changes = [e["message"] for e in doc["events"] if e["kind"] == "membership"]
    assert changes[0] == "training started with world size 2" and "world size 2 -> 3" in changes, changes
    assert any(e["kind"] == "task_restart" and e["task"] == "worker:1" for e in doc["events"])

    lines = results(app, 3)
    assert {r["world_size"] for r in lines} == {3} and all(r["steps"] == STEPS for r in lines), lines
    rounds = max(lines, key=lambda r: len(r["rounds"]))["rounds"]
    starts = [at for _, at in rounds]
    assert [size for size, _ in rounds][:2] == [2, 3], rounds  # WORLD_SIZE 2 -> 3 in the training's own record
    # The loss re-formed the group (a third round at least, back to 3 with the replacement), and every
    # round resumed where the last one stopped: none restarted from zero.
    assert len(rounds) >= 3 and rounds[-1][0] == 3 and starts == sorted(starts) and starts[-1] > starts[1], rounds
    assert max(r["restart_count"] for r in lines) >= 1, lines  # the survivors' agents restarted their workers
    logs = tfyarn("logs", app).stdout
    assert "world size 2, resuming at step 0" in logs and "world size 3, resuming at step" in logs

    got = tfyarn("fetch", out_uri, str(tmp_path / "out"))
    assert got.returncode == 0, got.stderr
    model = torch.load(tmp_path / "out" / "model.pt", weights_only=False)
    assert model["step"] == STEPS and model["rounds"] == rounds
    assert wait_none_left(app) == [] and wait_none_left(holder) == []
