"""Node labels, pure parts: `cluster up --labels`, the queues' share, admission and planning of --node-label."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tfyarn import protocol
from tfyarn.admission import check_fits, check_queue_labels, parse_queues
from tfyarn.cluster import ClusterLayout, ClusterOptions, labels
from tfyarn.cluster.config import capacity_scheduler, hdfs_site, yarn_site
from tfyarn.errors import ClusterError, SpecError
from tfyarn.plan import PlanContext, plan
from tfyarn.rmnodes import NodeCapacity
from tfyarn.spec import JobSpec, RoleSpec

LAYOUT = ClusterLayout(root=Path("/c"), jar_cache=Path("/j"))


@pytest.mark.parametrize(("text", "want"), [
    ("2=gpu", {2: "gpu"}), ("2=gpu, 3=gpu", {2: "gpu", 3: "gpu"}), ("1=a_b,2=x-1", {1: "a_b", 2: "x-1"}),
    ("none", {}), (" none ", {}),
])
def test_labels_parse_and_print_back(text, want):
    assert labels.parse(text, 4) == want
    assert labels.parse(labels.text(want), 4) == want


@pytest.mark.parametrize(("text", "why"), [
    ("gpu", "not NODE=LABEL"), ("x=gpu", "not NODE=LABEL"), ("5=gpu", "nodes 1..4"), ("0=gpu", "nodes 1..4"),
    ("2=-gpu", "not a YARN label name"), ("2=g pu", "not a YARN label name"), ("2=", "not a YARN label name"),
    ("2=a,2=b", "two labels"),
])
def test_bad_labels_say_what_is_wrong(text, why):
    with pytest.raises(ClusterError, match=why):
        labels.parse(text, 4)


def test_labels_are_remembered_and_a_new_cluster_has_none(tmp_path):
    lay = ClusterLayout(root=tmp_path, jar_cache=tmp_path / "j")
    assert labels.remembered(lay) == {}
    labels.remember(lay, {2: "gpu"})
    assert labels.remembered(lay) == {2: "gpu"}
    labels.remember(lay, {})
    assert labels.remembered(lay) == {}


def test_each_labels_nodes_are_the_default_queues_and_none_leaves_the_queues_as_they_were():
    assert not any("node-labels" in k for k in capacity_scheduler())
    cs = capacity_scheduler(("gpu", "ssd"))
    root = "yarn.scheduler.capacity.root"
    assert cs[f"{root}.default.accessible-node-labels"] == "gpu,ssd"
    assert cs[f"{root}.research.accessible-node-labels"] == " "  # none: unset would inherit root's *
    for label in ("gpu", "ssd"):
        assert cs[f"{root}.accessible-node-labels.{label}.capacity"] == "100"
        assert cs[f"{root}.default.accessible-node-labels.{label}.capacity"] == "100"  # children add up to 100
        assert f"{root}.research.accessible-node-labels.{label}.capacity" not in cs
    assert ClusterOptions(labels={3: "ssd", 2: "gpu", 4: "gpu"}).label_names == ("gpu", "ssd")


def test_node_labels_are_enabled_and_kept_in_node_ones_data_dir():
    for lay in (LAYOUT, LAYOUT.for_node(2)):
        y = yarn_site(lay, ClusterOptions())
        assert y["yarn.node-labels.enabled"] == "true"
        assert y["yarn.node-labels.fs-store.root-dir"] == "file:///c/data/node-labels"


def test_each_node_runs_a_datanode_at_its_own_address_with_ports_of_its_own():
    one, two = hdfs_site(LAYOUT, 2), hdfs_site(LAYOUT.for_node(2), 2)
    assert one["dfs.datanode.address"] == "127.0.0.1:9866" and two["dfs.datanode.address"] == "127.0.0.2:9966"
    assert two["dfs.datanode.http.address"] == "127.0.0.2:9964" and two["dfs.datanode.ipc.address"] == "127.0.0.2:9967"
    assert two["dfs.datanode.hostname"] == "127.0.0.2" and two["dfs.client.use.datanode.hostname"] == "true"
    assert two["dfs.datanode.data.dir"] == "/c/nodes/2/data/datanode"
    assert two["dfs.namenode.name.dir"] == one["dfs.namenode.name.dir"] == "/c/data/namenode"
    assert (one["dfs.replication"], hdfs_site(LAYOUT, 1)["dfs.replication"]) == ("2", "1")


def node(host: str, label: str = "", gpus: int = 4) -> NodeCapacity:
    return NodeCapacity(f"{host}:8041", 16384, 16, gpus, labels=(label,) if label else ())


def job(label: str = "", worker_label: str = "", gpus: int = 0, **kw) -> JobSpec:
    roles = {"worker": RoleSpec("worker", instances=2, memory_mb=512, gpus=gpus, node_label=worker_label)}
    return JobSpec(name="j", command=("python", "t.py"), roles=roles, node_label=label, **kw).validate()


def test_a_label_must_be_on_a_running_node_and_the_error_names_those_that_are():
    nodes = [node("localhost"), node("127.0.0.2", "gpu")]
    check_fits(job("gpu"), nodes)
    with pytest.raises(SpecError, match="carries label 'tpu' \\(its nodes carry gpu\\)"):
        check_fits(job("tpu"), nodes)
    with pytest.raises(SpecError, match="no node of it carries a label"):
        check_fits(job(worker_label="gpu"), [node("localhost")])


def test_a_labelled_role_must_fit_a_node_with_its_label():
    nodes = [node("localhost", gpus=8), node("127.0.0.2", "gpu", gpus=2)]
    check_fits(job(gpus=8), nodes)
    with pytest.raises(SpecError, match="largest node with label 'gpu' offers 2"):
        check_fits(job(worker_label="gpu", gpus=4), nodes)


def queues(default_labels: list[str] | None) -> list:
    leaf = {"queueName": "default", "queuePath": "root.default", "type": "capacitySchedulerLeafQueueInfo",
            "state": "RUNNING"}
    if default_labels is not None:
        leaf["nodeLabels"] = default_labels
    raw = {"scheduler": {"schedulerInfo": {"type": "capacityScheduler", "queueName": "root",
                                           "queues": {"queue": [leaf]}}}}
    return parse_queues(json.dumps(raw).encode())


def test_a_queue_must_be_allowed_the_label():
    check_queue_labels(job("gpu"), queues(["gpu"]))
    check_queue_labels(job("gpu"), queues(["*"]))
    check_queue_labels(job(), queues(["ssd"]))
    with pytest.raises(SpecError, match="queue default may not use node label 'gpu' \\(its labels: ssd\\)"):
        check_queue_labels(job(worker_label="gpu"), queues(["ssd"]))
    with pytest.raises(SpecError, match="\\(its labels: none\\)"):  # the RM leaves nodeLabels out for none
        check_queue_labels(job("gpu"), queues(None))


def test_a_label_leaves_placement_to_yarn():
    spec = job("gpu")
    app = plan(spec, PlanContext(python="/py", nodes=("localhost", "127.0.0.2")))
    assert set(app.services) == {"worker"} and app.services["worker"].node_label == "gpu"
    assert app.services["worker"].nodes == [] and app.node_label == "gpu"
    assert protocol.ENV_NODE_HOSTS not in app.master.env
    wl = plan(job(worker_label="gpu"), PlanContext(python="/py"))
    assert wl.services["worker"].node_label == "gpu" and wl.node_label == ""


@pytest.mark.parametrize("kw", [{"placement": "spread"}, {"placement": "pack"}, {"exclude_nodes": ("h1",)}])
def test_a_label_with_tfyarns_own_placement_is_refused(kw):
    with pytest.raises(SpecError, match="YARN takes no node label with a host"):
        job(worker_label="gpu", **kw)
