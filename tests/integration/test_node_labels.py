"""YARN node labels: `cluster up --labels 2=gpu`, and a job's --node-label on the real RM.

Labelling a node moves it into its own partition for every job, so these
run late (disruptive) and take the label off again.
"""
from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from tests.integration.conftest import app_id_from, status_json, tfyarn
from tests.integration.nodes import NODE2, ensure_nodes, rm_nodes, two_nodes  # noqa: F401

pytestmark = pytest.mark.disruptive


def rm(path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:8088/ws/v1/cluster/{path}", timeout=5) as r:
        return json.load(r)


def node_labels() -> dict[str, list[str]]:
    return {n["nodeHostName"]: n.get("nodeLabels") or [] for n in rm_nodes() if n["state"] == "RUNNING"}


def cluster_labels() -> list[str]:
    infos = (rm("get-node-labels") or {}).get("nodeLabelInfo") or []
    return sorted(i["name"] for i in ([infos] if isinstance(infos, dict) else infos))


def queue_labels() -> dict[str, list[str]]:
    queues = rm("scheduler")["scheduler"]["schedulerInfo"]["queues"]["queue"]
    return {q["queueName"]: sorted(q.get("nodeLabels") or []) for q in queues}


@pytest.fixture(scope="module")
def gpu_on_node2(two_nodes):
    res = tfyarn("cluster", "up", "--nodes", "2", "--labels", "2=gpu")
    assert res.returncode == 0, res.stdout + res.stderr
    yield res
    res = tfyarn("cluster", "up", "--nodes", "2", "--labels", "none")
    assert res.returncode == 0, res.stdout + res.stderr
    assert cluster_labels() == [] and all(not v for v in node_labels().values())
    assert queue_labels() == {"default": ["*"], "research": ["*"]}
    ensure_nodes(2)


def test_up_labels_node_2_for_the_rm_and_its_queues(gpu_on_node2):
    assert cluster_labels() == ["gpu"]
    assert node_labels() == {"localhost": [], NODE2: ["gpu"]}
    assert queue_labels() == {"default": ["gpu"], "research": []}  # gpu nodes are default's
    st = json.loads(tfyarn("cluster", "status", "--json").stdout)
    assert {n["address"]: n["labels"] for n in st["nodes"]} == {"127.0.0.1": [], NODE2: ["gpu"]}
    assert "label gpu" in tfyarn("cluster", "status").stdout
    again = tfyarn("cluster", "up", "--labels", "2=gpu")  # declarative: nothing left to change
    assert again.returncode == 0 and "label" not in again.stderr.replace("label gpu", ""), again.stderr


def test_a_labelled_job_runs_its_am_and_every_task_on_the_labelled_node(gpu_on_node2, yarn_apps):
    res = tfyarn("submit", "--node-label", "gpu", "--num-workers", "3", "--worker-memory", "256m",
                 "--name", "it-label", "--wait", "--", "python", "-c", "pass")
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 0, res.stdout + res.stderr
    assert [t["host"] for t in status_json(app)["tasks"]] == [NODE2] * 3
    info = rm(f"apps/{app}")["app"]
    assert info["amNodeLabelExpression"] == "gpu" and info["amHostHttpAddress"].startswith(f"{NODE2}:")


def test_a_label_no_node_carries_is_refused_before_submitting(gpu_on_node2):
    res = tfyarn("submit", "--node-label", "tpu", "--num-workers", "1", "--", "python", "-c", "pass")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "no RUNNING node of the cluster carries label 'tpu' (its nodes carry gpu)" in res.stderr
    assert "application_" not in res.stdout + res.stderr


def test_a_label_the_queue_may_not_use_is_refused_before_submitting(gpu_on_node2):
    res = tfyarn("submit", "--queue", "research", "--worker-node-label", "gpu", "--num-workers", "1",
                 "--", "python", "-c", "pass")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "queue research may not use node label 'gpu' (its labels: none)" in res.stderr
    assert "application_" not in res.stdout + res.stderr


def test_a_worker_label_needs_a_node_that_fits_the_container(gpu_on_node2):
    res = tfyarn("submit", "--worker-node-label", "gpu", "--num-workers", "1", "--worker-gpus", "5",
                 "--", "python", "-c", "pass")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "largest node with label 'gpu' offers 4" in res.stderr


def test_a_label_with_spread_placement_is_refused(gpu_on_node2):
    res = tfyarn("submit", "--node-label", "gpu", "--placement", "spread", "--num-workers", "2",
                 "--", "python", "-c", "pass")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "--placement" in res.stderr and "node label" in res.stderr


def test_tfyarn_nodes_shows_each_nodes_label(gpu_on_node2):
    res = tfyarn("nodes", "--json")
    assert res.returncode == 0, res.stderr
    assert {v["host"]: v["labels"] for v in json.loads(res.stdout)} == {"localhost": [], NODE2: ["gpu"]}
    assert "label: gpu" in tfyarn("nodes").stdout
