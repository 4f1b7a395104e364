"""Elastic pytorch workers (--num-workers MIN:MAX): the spec, the launch, the AM's rules, the world size."""
from __future__ import annotations

import json
import re
import logging
import sys
import time
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from appmaster.am import gantt, metrics, page
from appmaster.am.events import Events
from appmaster.am.rendezvous import RendezvousStore
from appmaster.am.tasks import DROP, RESTART, TaskTable
from appmaster.executor.elastic_agent import AGENT_LOGGER, MembershipHandler, membership_line
from appmaster.executor.monitor import parse_membership
from tests.unit.test_page import doc
from tfyarn import protocol, taskenv
from tfyarn.cli.main import cli
from tfyarn.errors import SpecError
from tfyarn.frameworks.base import Elastic
from tfyarn.frameworks.pytorch import LAST_CALL_S, PYTORCH, rendezvous_endpoint
from tfyarn.spec import ELASTIC_AM_MEMORY_MB, JobSpec, RoleSpec
from tfyarn.status import TaskState
from tfyarn.wire import Event, MembershipRecord


def spec(low: int = 2, high: int = 3, policy: str = "on-failure", framework: str = "pytorch", **role) -> JobSpec:
    worker = RoleSpec("worker", high, min_instances=low, restart_policy=policy, **role)
    return JobSpec(name="j", command=("python", "train.py"), framework=framework, roles={"worker": worker})


# -- the spec and the CLI ------------------------------------------------------------------------
def test_min_max_on_the_command_line_is_min_instances_and_instances():
    res = CliRunner().invoke(
        cli, ["submit", "--framework", "pytorch", "--num-workers", "2:4", "--dry-run", "--", "python", "t.py"]
    )
    assert res.exit_code == 0, res.output
    assert "    instances: 4\n" in res.output and "    min_instances: 2\n" in res.output


def test_an_elastic_job_gets_room_in_the_am_for_the_rendezvous_store():
    job = spec().validate()
    assert job.elastic_role is job.roles["worker"]
    assert job.am_container_mb == job.am_memory_mb + ELASTIC_AM_MEMORY_MB
    assert spec(0, 3).validate().am_container_mb == job.am_memory_mb  # a gang: no store


@pytest.mark.parametrize(
    ("job", "message"),
    [
        (spec(4, 3), "roles.worker.min_instances: 4 is more than instances (3)"),
        (spec(policy="all"), "roles.worker.restart_policy: elastic workers are replaced one at a time"),
        (spec(framework="tensorflow"), "roles.worker.min_instances: only pytorch workers are elastic"),
        (spec(below_min_timeout_s=0), "roles.worker.below_min_timeout_s"),
    ],
)
def test_bad_elastic_specs_name_their_key(job: JobSpec, message: str):
    with pytest.raises(SpecError, match=re.escape(message)):
        job.validate()


def test_the_yaml_takes_a_duration_for_the_below_min_timeout():
    data = {"name": "j", "command": ["python", "t.py"], "framework": "pytorch",
            "roles": {"worker": {"instances": 3, "min_instances": 2, "below_min_timeout_s": "2m"}}}
    assert JobSpec.from_dict(data).roles["worker"].below_min_timeout_s == 120


# -- what the executor runs ------------------------------------------------------------------------
def test_the_task_env_carries_min_max_and_room_for_every_replacement():
    env = taskenv.task_env(spec(max_restarts=2).validate(), "worker", 1, "application_1_0001")
    assert Elastic.from_env(env[protocol.ENV_ELASTIC]) == Elastic(2, 3, 6)  # 2 replacements x 3 tasks
    assert protocol.ENV_ELASTIC not in taskenv.task_env(spec(0, 3).validate(), "worker", 1, "a")


def test_the_command_is_torchruns_elastic_agent_on_the_ams_store():
    view = {"worker": ["h1:1", "h2:2"], protocol.VIEW_RENDEZVOUS: ["am-host:29400"]}
    elastic = Elastic(2, 3, 6, endpoint=rendezvous_endpoint(view), local_addr="h2")
    argv = PYTORCH.wrap_command(["python", "train.py", "--lr", "0.1"], 1, view, 1, "application_1_0001", elastic)
    assert argv[:3] == ["python", "-m", "appmaster.executor.elastic_agent"]
    assert "--nnodes=2:3" in argv and "--rdzv-backend=c10d" in argv and "--rdzv-endpoint=am-host:29400" in argv
    assert f"--rdzv-conf=is_host=false,last_call_timeout={LAST_CALL_S}" in argv
    assert "--max-restarts=6" in argv and "--local-addr=h2" in argv and "--rdzv-id=application_1_0001" in argv
    assert argv[-3:] == ["train.py", "--lr", "0.1"]
    plain = PYTORCH.elastic_command(["./run.sh"], 2, "a", Elastic(1, 2, 1, "e:1", report=False))
    assert plain[:3] == ["python", "-m", "torch.distributed.run"] and plain[-2:] == ["--no-python", "./run.sh"]
    assert "--nproc-per-node=2" in plain
    # torchrun's agent sets the rank variables each round; only its store sharing is turned off
    assert PYTORCH.task_env("worker", 1, view, 1, elastic) == {"TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"}


# -- the world size, from torchrun's agent to the AM ----------------------------------------------------
ROUND = {"role": "default", "restart_count": 1, "master_addr": "h", "master_port": 1, "group_rank": 0,
         "group_world_size": 3, "local_ranks": [0]}


def test_a_completed_round_becomes_one_membership_line(tmp_path):
    assert json.loads(membership_line(ROUND, 5.0)) == {
        "membership": True, "world_size": 3, "group_rank": 0, "restart_count": 1, "time": 5.0}
    assert membership_line(("other", "args"), 5.0) is None and membership_line({"role": "x"}, 5.0) is None
    events = tmp_path / "events"
    logger = logging.getLogger(AGENT_LOGGER + ".test")
    logger.setLevel(logging.INFO)
    logger.addHandler(MembershipHandler(str(events)))
    logger.info("[%(role)s] Rendezvous complete for workers. Result: %(group_world_size)s", ROUND)
    logger.info("Starting worker group")
    [line] = events.read_text().splitlines()
    record = parse_membership(line)
    assert record is not None and record.world_size == 3 and record.restart_count == 1
    assert parse_membership('{"progress": true, "step": 1}') is None and parse_membership("not json") is None


# -- the AM's rules -------------------------------------------------------------------------------------
def table(low: int = 2, high: int = 3, policy: str = "on-failure", **role) -> TaskTable:
    return TaskTable.for_job(spec(low, high, policy, **role).validate())


def join(t: TaskTable, *names: str) -> None:
    for task in t.tasks:
        if task.name in names:
            task.state, task.address = TaskState.RUNNING, f"{task.name}:1"


def test_training_starts_with_the_minimum_and_the_rest_may_wait_for_capacity():
    t = table()
    for task in t.tasks:
        task.state, task.requested_at = TaskState.REQUESTED, 0.0
    join(t, "worker:0")
    assert not t.ready()
    assert "1 of 3 worker container(s) not allocated" not in (t.timed_out(1000, 300, 900) or "x")
    assert "2 of 3 worker container(s) not allocated" in t.timed_out(1000, 300, 900)  # below the minimum
    join(t, "worker:1")
    assert t.ready()
    assert t.timed_out(1000, 300, 900) is None  # worker:2 waits as long as YARN makes it


def test_a_lost_task_is_replaced_alone_or_given_up_and_the_group_goes_on():
    t = table(max_restarts=1)
    join(t, "worker:0", "worker:1", "worker:2")
    lost = t.tasks[2]
    lost.state, lost.exit_message = TaskState.FAILED, "Container killed"
    assert t.failure_action(lost) == RESTART
    lost.restarts = 1
    assert t.failure_action(lost) == DROP
    lost.dropped = True
    assert t.failed() == [] and t.outcome() is None  # two train on
    never = table(policy="never")
    never.tasks[0].state = TaskState.FAILED
    assert never.failure_action(never.tasks[0]) == DROP


def test_the_group_succeeds_when_its_members_are_done_and_fails_when_all_are_given_up():
    t = table()
    join(t, "worker:0", "worker:1")
    t.tasks[2].state = TaskState.REQUESTED  # never granted: it does not hold the job
    t.tasks[0].state, t.tasks[0].exit_code = TaskState.SUCCEEDED, 0
    assert t.outcome() is None  # worker:1 still trains
    t.tasks[1].state, t.tasks[1].exit_code = TaskState.SUCCEEDED, 0
    assert t.outcome() == ("SUCCEEDED", "2 elastic worker task(s) succeeded")
    bad = table()
    for task in bad.tasks:
        task.state, task.exit_code, task.dropped, task.stderr_tail = TaskState.FAILED, 1, True, "ValueError: x"
    status, diag = bad.outcome()
    assert status == "FAILED" and "every elastic worker task failed" in diag and diag.endswith("ValueError: x")


def test_below_the_minimum_for_longer_than_its_timeout_fails_the_job():
    t = table(below_min_timeout_s=60)
    join(t, "worker:0", "worker:1")
    assert t.below_min(100.0, started=True) is None
    t.tasks[1].state = TaskState.RESTARTING
    assert t.below_min(100.0, started=False) is None  # before training: the allocation timeout rules
    assert t.below_min(100.0, started=True) is None and t.below_min(160.0, started=True) is None
    why = t.below_min(161.0, started=True)
    assert why and why.startswith("only 1 of the minimum 2 worker(s) trained for 61 s (below_min_timeout_s 60)")
    join(t, "worker:1")
    assert t.below_min(500.0, started=True) is None and t.below_min_since is None


def test_the_world_size_is_the_newest_round_and_each_change_an_event():
    t = table()
    join(t, "worker:0", "worker:1")
    assert t.world_size() == 0
    t.tasks[0].membership = MembershipRecord(world_size=2, group_rank=0, restart_count=0, time=10.0)
    t.tasks[1].membership = MembershipRecord(world_size=3, group_rank=1, restart_count=0, time=20.0)
    assert t.world_size() == 3
    events = Events()
    events.membership(0, 2)
    events.membership(2, 3)
    assert [e.message for e in events.recent()] == ["training started with world size 2", "world size 2 -> 3"]


# -- what users see -------------------------------------------------------------------------------------
def test_the_page_metrics_and_chart_show_the_world_size_and_its_changes():
    ev = Event(kind="membership", time=105.0, message="world size 2 -> 3")
    d = doc(elastic="2:3", world_size=3, events=(ev,))
    assert "<th>World size</th><td>3 (elastic workers 2:3)</td>" in page.render(d)
    assert 'tfyarn_elastic_world_size{app_id="application_1_0001"} 3' in metrics.render(d)
    assert "tfyarn_elastic_world_size" not in metrics.render(doc())
    root = ET.fromstring(gantt.render(d))
    [line] = [e for e in root.iter("{http://www.w3.org/2000/svg}line") if e.get("class") == "membership"]
    assert "world size 2 -> 3" in line.find("{http://www.w3.org/2000/svg}title").text


# -- the store the AM hosts -----------------------------------------------------------------------------
def test_the_rendezvous_store_serves_until_stopped():
    import torch.distributed as dist

    store = RendezvousStore("127.0.0.1")
    try:
        assert store.wait(120) and store.endpoint.startswith("127.0.0.1:"), store.error
        host, port = store.endpoint.rsplit(":", 1)
        client = dist.TCPStore(host, int(port), is_master=False, timeout=__import__("datetime").timedelta(seconds=10))
        client.set("k", "v")
        assert client.get("k") == b"v" and store.alive()
    finally:
        store.stop()
    assert not store.alive()


def test_a_python_without_torch_fails_with_one_line_saying_what_to_do(tmp_path):
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} -S -c 'import sys; sys.path=[]; import torch' \"$@\"\n")
    fake.chmod(0o755)
    store = RendezvousStore("h", python=str(fake))
    started = time.monotonic()
    assert store.wait(60) and not store.endpoint and time.monotonic() - started < 60
    assert "an elastic job needs torch importable by the AM's Python" in store.error
    assert "ModuleNotFoundError" in store.error
    store.stop()
