"""Admission checks: the RM's answers as it really sends them, and a check that cannot run says so.

The samples below keep the shape of a Hadoop 3.5 RM's answers (fields cut
down); tests/integration/test_admission.py runs the same checks against the
real cluster.
"""
import http.server
import json
import threading
from pathlib import Path

import pytest

from tfyarn import rmnodes
from tfyarn.admission import (
    NodeCapacity,
    SchedulerLimits,
    Unreadable,
    check_limits,
    check_queue,
    parse_conf,
    parse_nodes,
    parse_queues,
)
from tfyarn.errors import SpecError
from tfyarn.hadoop_env import HadoopEnv
from tfyarn.spec import JobSpec, RoleSpec

CONF_JSON = json.dumps({"properties": [
    {"key": "yarn.scheduler.maximum-allocation-mb", "value": "8192", "isFinal": False, "resource": "yarn-site.xml"},
    {"key": "yarn.scheduler.maximum-allocation-vcores", "value": "16", "isFinal": False,
     "resource": "yarn-site.xml"},
    {"key": "yarn.resource-types", "value": "yarn.io/gpu", "isFinal": False, "resource": "resource-types.xml"},
]}).encode()
CONF_XML = (b'<?xml version="1.0" encoding="UTF-8" standalone="no"?><configuration>\n'
            b"<property><name>yarn.scheduler.maximum-allocation-mb</name><value>8192</value><final>false</final>"
            b"<source>yarn-site.xml</source></property>\n"
            b"<property><name>yarn.scheduler.maximum-allocation-vcores</name><value>16</value></property>\n"
            b"<property><name>yarn.resource-types</name><value>yarn.io/gpu</value></property>\n</configuration>")


def leaf(path: str, state: str = "RUNNING") -> dict:
    return {"type": "capacitySchedulerLeafQueueInfo", "queuePath": path, "queueName": path.rsplit(".", 1)[-1],
            "state": state, "autoCreationEligibility": "off", "autoCreateChildQueueEnabled": False}


def parent(path: str, children: list[dict], auto: str = "off") -> dict:
    return {"type": "capacitySchedulerQueueInfo", "queuePath": path, "queueName": path.rsplit(".", 1)[-1],
            "state": "RUNNING", "autoCreationEligibility": auto, "queues": {"queue": children}}


def capacity(*queues: dict) -> bytes:
    return json.dumps({"scheduler": {"schedulerInfo": {
        "type": "capacityScheduler", "queueName": "root", "queuePath": "root", "queues": {"queue": list(queues)}}}}
    ).encode()


@pytest.mark.parametrize("raw", [CONF_JSON, CONF_XML], ids=["json", "xml"])
def test_conf_is_read_as_json_and_as_xml(raw):
    limits = SchedulerLimits.from_conf(parse_conf(raw))
    assert limits == SchedulerLimits(8192, 16, frozenset({"yarn.io/gpu"}))


@pytest.mark.parametrize("raw,why", [
    (b"<html><body>Login</body>", "neither JSON nor XML"),
    (b"{not json", "not JSON"),
    (b'{"conf": []}', 'without a "properties" list'),
    (b'{"properties": []}', "no yarn.scheduler.maximum-allocation-mb"),
    (b"<configuration/>", "no yarn.scheduler.maximum-allocation-mb"),
])
def test_unreadable_conf_says_why(raw, why):
    with pytest.raises(Unreadable, match=why):
        parse_conf(raw)


NODES = json.dumps({"nodes": {"node": [{
    "id": "127.0.0.1:8041", "state": "RUNNING", "availMemoryMB": 12288, "availableVirtualCores": 14,
    "totalResource": {"memory": 16384, "vCores": 16, "resourceInformations": {"resourceInformation": [
        {"name": "memory-mb", "value": 16384, "units": "Mi"}, {"name": "vcores", "value": 16},
        {"name": "yarn.io/gpu", "value": 4, "units": ""}]}},
    "availableResource": {"memory": 12288, "vCores": 14, "resourceInformations": {"resourceInformation": [
        {"name": "memory-mb", "value": 12288}, {"name": "yarn.io/gpu", "value": 3}]}},
}]}}).encode()


def test_nodes_total_and_free_with_gpus():
    (node,) = parse_nodes(NODES)
    assert node == NodeCapacity("127.0.0.1:8041", 16384, 16, 4, "RUNNING", 12288, 14, 3)


def test_nodes_are_asked_of_the_rm_once_for_running_ones(monkeypatch):
    asked: list[str] = []
    monkeypatch.setattr(rmnodes, "get", lambda url, timeout: asked.append(url) or NODES)
    assert [n.gpus for n in rmnodes.get_nodes("http://rm:8088/")] == [4]
    assert asked == ["http://rm:8088/ws/v1/cluster/nodes?states=RUNNING"]
    monkeypatch.setattr(rmnodes, "get", lambda url, timeout: b"<html>")
    assert rmnodes.fetch_nodes("http://rm:8088") is None  # unreadable: "no answer" for pollers
    with pytest.raises(Unreadable, match="not JSON"):
        rmnodes.get_nodes("http://rm:8088")


def test_nodes_none_and_garbage():
    assert parse_nodes(b'{"nodes": null}') == []
    with pytest.raises(Unreadable):
        parse_nodes(b"[1, 2]")
    with pytest.raises(Unreadable):
        parse_nodes(b'{"nodes": {"node": [{"totalResource": {"memory": "lots"}}]}}')


QUEUES = capacity(leaf("root.default"), leaf("root.research"), leaf("root.old", state="STOPPED"),
                  parent("root.teams", [leaf("root.teams.vision")]),
                  parent("root.users", [], auto="flexible"))


@pytest.mark.parametrize("name", ["default", "root.default", "research", "vision", "root.teams.vision",
                                  "root.users.alice"])
def test_queues_that_take_jobs(name):
    check_queue(name, parse_queues(QUEUES))


@pytest.mark.parametrize("name,why", [
    ("nosuchqueue", "this cluster has no queue 'nosuchqueue'; use one of the queues that take jobs: "
                    "default, research, vision"),
    ("old", "queue: queue old is STOPPED and takes no new jobs"),
    ("teams", "queue: teams is a parent queue, which takes no jobs"),
    ("root", "queue: root is a parent queue"),
    ("root.teams.nlp", "no queue 'root.teams.nlp'"),  # teams does not create queues
])
def test_queues_refused_with_the_ones_that_exist(name, why):
    with pytest.raises(SpecError, match=why.replace(".", r"\.").replace("(", r"\(")):
        check_queue(name, parse_queues(QUEUES))


def test_fair_and_fifo_schedulers_take_any_queue_name():
    fair = {"scheduler": {"schedulerInfo": {"type": "fairScheduler", "rootQueue": {"queueName": "root"}}}}
    assert parse_queues(json.dumps(fair).encode()) is None
    fifo = {"scheduler": {"schedulerInfo": {"type": "fifoScheduler"}}}
    assert parse_queues(json.dumps(fifo).encode()) is None
    with pytest.raises(Unreadable):
        parse_queues(b'{"scheduler": 3}')


def test_am_memory_counts_against_the_maximum():
    spec = JobSpec(name="j", command=("x",), roles={"worker": RoleSpec("worker", 1)}).validate()
    with pytest.raises(SpecError, match="am_memory_mb: each ApplicationMaster container asks 8193 MiB"):
        check_limits(spec, SchedulerLimits.from_conf(parse_conf(CONF_JSON)), 8193)


# -- a check that cannot run warns ---------------------------------------------
class _Garbage(http.server.BaseHTTPRequestHandler):
    status = 200
    body = b"\x00\x01 this is not what an RM says"

    def do_GET(self) -> None:  # noqa: N802
        self.send_response(self.status)
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def rm_web(request, tmp_path: Path):
    """An HADOOP_CONF_DIR whose RM web address is a local server answering ``request.param`` (status, body)."""
    status, body = request.param
    handler = type("H", (_Garbage,), {"status": status, "body": body})
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    (tmp_path / "yarn-site.xml").write_text(
        "<configuration><property><name>yarn.resourcemanager.webapp.address</name>"
        f"<value>127.0.0.1:{server.server_address[1]}</value></property></configuration>")
    yield tmp_path, server.server_address[1]
    server.shutdown()
    server.server_close()


def warnings_of_admission(conf_dir: Path) -> list[str]:
    from tfyarn.client import Client

    client = Client.__new__(Client)  # no skein driver: admission reads only the RM's REST API
    client.hadoop = HadoopEnv(conf_dir=conf_dir, path="")
    said: list[str] = []
    client.admit(JobSpec(name="j", command=("x",), roles={"worker": RoleSpec("worker", 1)}).validate(), said.append)
    return said


@pytest.mark.parametrize("rm_web", [(200, _Garbage.body)], indirect=True)
def test_garbage_answers_warn_for_every_check(rm_web):
    conf_dir, port = rm_web
    said = warnings_of_admission(conf_dir)
    assert len(said) == 3, said
    for line, what, path in zip(said, ("queues", "limits", "nodes' capacities"),
                                ("/ws/v1/cluster/scheduler", "/conf", "/ws/v1/cluster/nodes"), strict=True):
        assert line.startswith(f"Warning: could not read the scheduler's {what}" if what != "nodes' capacities"
                               else "Warning: could not read the nodes' capacities"), line
        assert f"http://127.0.0.1:{port}{path}" in line
        assert line.endswith("the job was not checked against them")
        assert "\n" not in line


@pytest.mark.parametrize("rm_web", [(401, b"Authentication required")], indirect=True)
def test_a_kerberized_rm_answering_401_warns(rm_web):
    conf_dir, _ = rm_web
    said = warnings_of_admission(conf_dir)
    assert len(said) == 3 and all("HTTP 401" in line for line in said), said


def test_rm_rest_not_answering_warns(tmp_path):
    (tmp_path / "yarn-site.xml").write_text(
        "<configuration><property><name>yarn.resourcemanager.webapp.address</name>"
        "<value>127.0.0.1:1</value></property></configuration>")
    said = warnings_of_admission(tmp_path)
    assert len(said) == 3 and all("Connection refused" in line for line in said), said
