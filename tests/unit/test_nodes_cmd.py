"""`tfyarn nodes`: the RM's nodes (in its real JSON shape) merged with running jobs' tasks, and rendered."""
from __future__ import annotations

import copy
import http.server
import json
import os
import threading
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from tests.unit.test_page import doc, task
from tfyarn.cli.main import cli
from tfyarn.cli.nodes_cmd import UNKNOWN, merge, render, to_json
from tfyarn.errors import UnreachableError
from tfyarn.rmnodes import parse_nodes
from tfyarn.status import JobReport, JobState, TaskState

# One record of a real answer of http://127.0.0.1:8088/ws/v1/cluster/nodes (Hadoop 3.5.0, node 2 of the
# local cluster, 4 GPUs declared); the others below are it with the RM's own fields changed.
REAL_NODE = json.loads(r'''
{
 "rack": "/default-rack",
 "state": "RUNNING",
 "id": "127.0.0.2:8041",
 "nodeHostName": "127.0.0.2",
 "nodeHTTPAddress": "127.0.0.2:8042",
 "lastHealthUpdate": 1796328521515,
 "version": "3.5.0",
 "healthReport": "",
 "numContainers": 0,
 "usedMemoryMB": 0,
 "availMemoryMB": 16384,
 "usedVirtualCores": 0,
 "availableVirtualCores": 16,
 "memUtilization": 18.817673,
 "cpuUtilization": 47.207447,
 "numRunningOpportContainers": 0,
 "usedMemoryOpportGB": 0,
 "usedVirtualCoresOpport": 0,
 "numQueuedContainers": 0,
 "allocationTags": {},
 "resourceUtilization": {
  "nodePhysicalMemoryMB": 4536,
  "nodeVirtualMemoryMB": 4536,
  "nodeCPUUsage": 0.9441489577293396,
  "aggregatedContainersPhysicalMemoryMB": 285,
  "aggregatedContainersVirtualMemoryMB": 3457,
  "containersCPUUsage": 0.5320000052452087
 },
 "usedResource": {
  "memory": 0,
  "vCores": 0,
  "resourceInformations": {
   "resourceInformation": [
    {
     "maximumAllocation": 9223372036854775807,
     "minimumAllocation": 0,
     "name": "memory-mb",
     "resourceType": "COUNTABLE",
     "units": "Mi",
     "value": 0
    },
    {
     "maximumAllocation": 9223372036854775807,
     "minimumAllocation": 0,
     "name": "vcores",
     "resourceType": "COUNTABLE",
     "units": "",
     "value": 0
    },
    {
     "maximumAllocation": 9223372036854775807,
     "minimumAllocation": 0,
     "name": "yarn.io/gpu",
     "resourceType": "COUNTABLE",
     "units": "",
     "value": 0
    }
   ]
  }
 },
 "availableResource": {
  "memory": 16384,
  "vCores": 16,
  "resourceInformations": {
   "resourceInformation": [
    {
     "maximumAllocation": 9223372036854775807,
     "minimumAllocation": 0,
     "name": "memory-mb",
     "resourceType": "COUNTABLE",
     "units": "Mi",
     "value": 16384
    },
    {
     "maximumAllocation": 9223372036854775807,
     "minimumAllocation": 0,
     "name": "vcores",
     "resourceType": "COUNTABLE",
     "units": "",
     "value": 16
    },
    {
     "maximumAllocation": 9223372036854775807,
     "minimumAllocation": 0,
     "name": "yarn.io/gpu",
     "resourceType": "COUNTABLE",
     "units": "",
     "value": 4
    }
   ]
  }
 },
 "nodeAttributesInfo": {},
 "totalResource": {
  "memory": 16384,
  "vCores": 16,
  "resourceInformations": {
   "resourceInformation": [
    {
     "maximumAllocation": 9223372036854775807,
     "minimumAllocation": 0,
     "name": "memory-mb",
     "resourceType": "COUNTABLE",
     "units": "Mi",
     "value": 16384
    },
    {
     "maximumAllocation": 9223372036854775807,
     "minimumAllocation": 0,
     "name": "vcores",
     "resourceType": "COUNTABLE",
     "units": "",
     "value": 16
    },
    {
     "maximumAllocation": 9223372036854775807,
     "minimumAllocation": 0,
     "name": "yarn.io/gpu",
     "resourceType": "COUNTABLE",
     "units": "",
     "value": 4
    }
   ]
  }
 }
}
''')


def rm_node(node_id: str, state: str = "RUNNING", health: str = "", heard_ms: int = 1796328521515,
            used_mb: int = 0, used_vcores: int = 0, used_gpus: int = 0, containers: int = 0) -> dict:
    n = copy.deepcopy(REAL_NODE)
    host = node_id.rpartition(":")[0]
    n.update(id=node_id, nodeHostName=host, nodeHTTPAddress=f"{host}:8042", state=state, healthReport=health,
             lastHealthUpdate=heard_ms, usedMemoryMB=used_mb, availMemoryMB=16384 - used_mb,
             usedVirtualCores=used_vcores, availableVirtualCores=16 - used_vcores, numContainers=containers)
    n["usedResource"].update(memory=used_mb, vCores=used_vcores)
    for info in n["usedResource"]["resourceInformations"]["resourceInformation"]:
        info["value"] = {"memory-mb": used_mb, "vcores": used_vcores, "yarn.io/gpu": used_gpus}[info["name"]]
    return n


def answer(*records: dict) -> bytes:
    return json.dumps({"nodes": {"node": list(records)}}).encode()


def report(app_id: str = "application_1_0001", name: str = "demo") -> JobReport:
    return JobReport(app_id, name, JobState.RUNNING, "RUNNING", "UNDEFINED", "", "http://rm/proxy/x", "default",
                     "ann", 0, 0, ("tfyarn", "framework:pytorch"))


def two_node_job():
    """worker:0 on localhost with GPUs 1,3; worker:1 on 127.0.0.2 without; tasks not running now."""
    return report(), doc(tasks=(
        task(name="worker:0", host="localhost", gpus=(1, 3)),
        task(name="worker:1", index=1, host="127.0.0.2", gpus=()),
        task(name="worker:2", index=2, host="127.0.0.2", state=TaskState.RESTARTING),  # its container is gone
        task(name="worker:3", index=3, host="localhost", state=TaskState.SUCCEEDED),
        task(name="worker:4", index=4, host="", state=TaskState.REQUESTED),  # no container yet
    ))


def test_the_real_answer_gives_each_nodes_health():
    real = parse_nodes(answer(REAL_NODE))[0]
    assert (real.host, real.state, real.health_report, real.last_health_update_ms) == \
        ("127.0.0.2", "RUNNING", "", 1796328521515)
    sick = parse_nodes(answer(rm_node("n3:8041", "UNHEALTHY", "1/1 local-dirs are bad: /data/nm")))[0]
    assert sick.state == "UNHEALTHY" and sick.health_report == "1/1 local-dirs are bad: /data/nm"
    old = dict(REAL_NODE)
    del old["healthReport"], old["lastHealthUpdate"]  # an RM that leaves them out
    assert parse_nodes(answer(old))[0].health_report == "" and parse_nodes(answer(old))[0].last_health_update_ms == 0


def test_each_node_lists_the_tasks_running_on_it_now():
    nodes = parse_nodes(answer(rm_node("localhost:8041", used_mb=2048, used_vcores=2, used_gpus=2, containers=2),
                               rm_node("127.0.0.2:8041", used_mb=1024, used_vcores=1, containers=1)))
    views = merge(nodes, [two_node_job()])
    assert [(v.host, v.state) for v in views] == [("localhost", "RUNNING"), ("127.0.0.2", "RUNNING")]
    assert [(t.app_id, t.job_name, t.task, t.gpus) for t in views[0].tasks] == \
        [("application_1_0001", "demo", "worker:0", (1, 3))]
    assert [t.task for t in views[1].tasks] == ["worker:1"]
    assert (views[0].memory_used_mb, views[0].memory_mb, views[0].gpus_used, views[0].gpus) == (2048, 16384, 2, 4)


def test_a_task_on_a_host_the_rm_does_not_list_is_still_shown():
    views = merge(parse_nodes(answer(rm_node("localhost:8041"))),
                  [(report(), doc(tasks=(task(name="worker:0", host="gone-node"),)))])
    assert [(v.host, v.state, [t.task for t in v.tasks]) for v in views] == \
        [("localhost", "RUNNING", []), ("gone-node", UNKNOWN, ["worker:0"])]
    assert "not listed by the ResourceManager" in render(views)[2]


def test_a_host_listed_lost_and_running_again_gets_its_tasks_on_the_running_record():
    nodes = parse_nodes(answer(rm_node("127.0.0.2:8041", "LOST"), rm_node("127.0.0.2:8051")))
    views = merge(nodes, [(report(), doc(tasks=(task(name="worker:0", host="127.0.0.2"),)))])
    assert [(v.node_id, v.state, len(v.tasks)) for v in views] == \
        [("127.0.0.2:8041", "LOST", 0), ("127.0.0.2:8051", "RUNNING", 1)]


def test_text_flags_lost_and_unhealthy_nodes_and_indents_tasks():
    nodes = parse_nodes(answer(
        rm_node("localhost:8041", used_mb=2048, used_vcores=2, used_gpus=2, containers=2),
        rm_node("127.0.0.2:8041", used_mb=1024, used_vcores=1, containers=1),
        rm_node("127.0.0.3:8041", "LOST", heard_ms=0),
        rm_node("127.0.0.4:8041", "UNHEALTHY", "1/1 local-dirs usable space is below 90%"),
        rm_node("127.0.0.5:8041", "DECOMMISSIONED"),
    ))
    lines = render(merge(nodes, [two_node_job()]))
    assert lines[0].split() == ["NODE", "STATE", "MEMORY", "MB", "VCORES", "GPUS", "CONTAINERS", "HEALTH"]
    assert lines[1].split()[:6] == ["localhost", "RUNNING", "2048/16384", "2/16", "2/4", "2"]
    assert "healthy (reported " in lines[1] and "!!" not in lines[1]
    assert lines[2].split() == ["application_1_0001", "demo", "worker:0", "GPUs", "1,3"] and lines[2].startswith("  ")
    assert lines[3].split()[:2] == ["127.0.0.2", "RUNNING"]
    assert lines[4].split() == ["application_1_0001", "demo", "worker:1", "no", "GPUs"]
    assert lines[5].split()[:3] == ["127.0.0.3", "!!", "LOST"] and "reported never" in lines[5]
    assert lines[6].startswith("  !! LOST: the ResourceManager has not heard from its NodeManager")
    assert lines[7].split()[:3] == ["127.0.0.4", "!!", "UNHEALTHY"]
    assert "unhealthy: 1/1 local-dirs usable space is below 90%" in lines[7]
    assert lines[8].startswith("  !! UNHEALTHY: its NodeManager's health check failed")
    assert lines[9].split()[:2] == ["127.0.0.5", "DECOMMISSIONED"] and "!!" not in lines[9]
    assert lines[10].startswith("2 node(s) LOST or UNHEALTHY") and len(lines) == 11


def test_no_nodes_says_so():
    assert render(merge(parse_nodes(b'{"nodes": null}'), [])) == ["The ResourceManager lists no nodes."]


def test_json_is_a_list_of_node_objects_with_their_tasks():
    nodes = parse_nodes(answer(rm_node("localhost:8041", "UNHEALTHY", "disk full", used_gpus=2),
                               rm_node("127.0.0.2:8041")))
    out = json.loads(to_json(merge(nodes, [two_node_job()])))
    assert [list(n) for n in out] == [[
        "host", "node_id", "state", "health_report", "last_health_update_ms", "memory_mb", "memory_used_mb",
        "vcores", "vcores_used", "gpus", "gpus_used", "containers", "tasks", "labels"]] * 2
    assert (out[0]["state"], out[0]["health_report"], out[0]["gpus_used"], out[0]["gpus"]) == \
        ("UNHEALTHY", "disk full", 2, 4)
    assert out[0]["tasks"] == [{"app_id": "application_1_0001", "job_name": "demo", "task": "worker:0",
                                "gpus": [1, 3]}]
    assert [t["task"] for t in out[1]["tasks"]] == ["worker:1"]


# --- the command, against a stand-in RM REST server ------------------------------------------------------
@pytest.fixture
def rm_rest(tmp_path):
    """A conf dir whose RM web address serves the captured nodes answer (local cluster shape)."""
    body = answer(rm_node("localhost:8041", used_mb=2048, containers=2), rm_node("127.0.0.2:8041", "LOST"))

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            ok = self.path == "/ws/v1/cluster/nodes"
            self.send_response(200 if ok else 404)
            self.end_headers()
            self.wfile.write(body if ok else b"")

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    conf = _conf(tmp_path, f"127.0.0.1:{server.server_address[1]}")
    yield conf
    server.shutdown()


def _conf(tmp_path: Path, web: str) -> Path:
    conf = tmp_path / "conf"
    conf.mkdir(exist_ok=True)
    (conf / "yarn-site.xml").write_text(
        "<configuration><property><name>yarn.resourcemanager.webapp.address</name>"
        f"<value>{web}</value></property></configuration>")
    return conf


def _fake_client(conf: Path, jobs: list):
    class FakeClient:
        def __init__(self):
            self.hadoop = SimpleNamespace(conf_dir=conf)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

        def list_jobs(self):
            return [rep for rep, _ in jobs]

        def live_doc(self, rep):
            return dict((r.app_id, d) for r, d in jobs)[rep.app_id]

    return FakeClient


def test_the_command_reads_the_rm_and_the_running_jobs(rm_rest, monkeypatch):
    import tfyarn.client

    ended = replace(report("application_1_0002", "old"), state=JobState.SUCCEEDED)
    silent = report("application_1_0003", "starting")
    monkeypatch.setattr(tfyarn.client, "Client", _fake_client(rm_rest, [
        two_node_job(), (ended, doc(tasks=(task(host="localhost"),))), (silent, None)]))
    res = CliRunner().invoke(cli, ["nodes", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert [(n["host"], n["state"], [t["task"] for t in n["tasks"]]) for n in out] == \
        [("localhost", "RUNNING", ["worker:0"]), ("127.0.0.2", "LOST", ["worker:1"])]
    assert "application_1_0003 (RUNNING): its AM has published no tasks yet" in res.stderr
    text = CliRunner().invoke(cli, ["nodes"])
    assert text.exit_code == 0 and "!! LOST" in text.stdout and "worker:1" in text.stdout


def test_an_unreachable_rm_rest_api_is_exit_3(tmp_path, monkeypatch):
    import tfyarn.client

    monkeypatch.setattr(tfyarn.client, "Client", _fake_client(_conf(tmp_path, "127.0.0.1:1"), []))
    res = CliRunner().invoke(cli, ["nodes"])
    assert res.exit_code == UnreachableError.exit_code == 3
    assert res.stderr.startswith("Error: cannot read the nodes from the ResourceManager's REST API at "
                                 "http://127.0.0.1:1") and len(res.stderr.splitlines()) == 1


def test_an_unreachable_rm_is_exit_3_with_the_usual_line(tmp_path, monkeypatch):
    """No stand-in: the real Client finds the RM's port closed, as `tfyarn list` does."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "yarn-site.xml").write_text(
        "<configuration><property><name>yarn.resourcemanager.address</name>"
        "<value>127.0.0.1:1</value></property></configuration>")
    monkeypatch.setenv("HADOOP_CONF_DIR", str(conf))
    # A `yarn` on PATH whatever the shell has (the cluster's own is there only after `cluster env`):
    # the RM's closed port must be what is reported, before skein would ever run it.
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "yarn").write_text("#!/bin/sh\nexit 1\n")
    (tmp_path / "bin" / "yarn").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    res = CliRunner().invoke(cli, ["nodes", "--json"])
    assert res.exit_code == 3 and res.stdout == ""
    assert res.stderr.startswith("Error: the ResourceManager at 127.0.0.1:1 is unreachable")


def test_help_says_what_it_is_for():
    res = CliRunner().invoke(cli, ["nodes", "--help"])
    assert "Which node holds which task, which nodes are unhealthy or lost" in res.output
    assert "nodes" in CliRunner().invoke(cli, ["--help"]).output
