"""The ApplicationMaster's loop against the in-memory skein stand-in: the gang from allocation to the job's end.

The test plays YARN (FakeApp.allocate/finish) and the executors, writing their records with the executor's
own code or the wire types, so a format drift between the wings breaks these tests.
"""
from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest

from appmaster.am import gpus, master
from appmaster.am.tasks import Task, TaskTable
from appmaster.executor import main as executor
from appmaster.executor import process
from appmaster.executor.monitor import Timeline
from tests.fakes import FakeApp, FakeStatusServer
from tests.waiting import Background, wait_until
from tfyarn import logfmt, nodegpus, protocol, rmnodes, wire
from tfyarn.rmnodes import NodeCapacity
from tfyarn.spec import JobSpec, RoleSpec
from tfyarn.status import TaskState

NODES = ["node0:8042", "node1:8042"]


@pytest.fixture(autouse=True)
def fast_loop(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Polls every 5 ms, no stray env; the tfyarn loggers as they were (master.main sets them up as in a container)."""
    monkeypatch.setattr(master, "POLL_S", 0.005)
    monkeypatch.setattr(master, "STEADY_POLL_S", 0.005)
    for name in (protocol.ENV_RM_WEB, "CONTAINER_ID", protocol.ENV_SUBMIT_TIME):
        monkeypatch.delenv(name, raising=False)
    logger = logging.getLogger("tfyarn")
    saved = (logger.handlers[:], logger.propagate, logger.level)
    yield
    logger.handlers[:], logger.propagate = saved[:2]
    logger.setLevel(saved[2])


class Gang:
    """One job: the fake application, the AM's Job, and the test playing each container's executor."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, framework: str, fields: dict[str, Any],
                 roles: dict[str, int | RoleSpec]):
        specs = {n: r if isinstance(r, RoleSpec) else RoleSpec(n, r) for n, r in roles.items()}
        self.spec = JobSpec(name="j", command=("python", "train.py"), framework=framework, roles=specs,
                            **fields).validate()
        self.app = FakeApp.with_services({n: r.instances for n, r in specs.items()})
        self.job = master.Job(self.app.id, self.spec, TaskTable.for_job(self.spec), time.time())
        self.mp = monkeypatch
        self.pool, self.bound = gpus.DevicePool(), set[str]()
        self.web: Any = FakeStatusServer()  # the AM's StatusServer, in memory

    def task(self, name: str) -> Task:
        return next(t for t in self.job.table.tasks if t.name == name)

    def yarn_id(self, name: str) -> str:
        return self.app.container(self.task(name).container_id).yarn_container_id

    def register(self, name: str, address: str = "", gpus: tuple[int, ...] | None = None, binding: str = "") -> str:
        """The task's executor registers its address, as its current container."""
        t = self.task(name)
        address = address or f"{t.host}:{20000 + len(self.app.kv.puts)}"  # a port no other registration has
        record = wire.Registration(address=address, staging_s=0.5, container=self.yarn_id(name), gpus=gpus,
                                   gpu_binding=binding)
        self.app.kv[protocol.kv_task_addr(t.role, t.index)] = record.to_json().encode()
        return address

    def exit(self, name: str, code: int, stderr: str = "", yarn_id: str = "") -> None:
        """The task's executor reports how its command ended, with the executor's own code."""
        t = self.task(name)
        self.mp.setenv("CONTAINER_ID", yarn_id or self.yarn_id(name))
        executor.report_exit(self.app, t.role, t.index, process.Outcome(code, stderr))

    def step(self, now: float | None = None) -> None:
        """One pass of the AM's loop, without its clock and page: sync, failures, restarts, GPUs."""
        now = time.time() if now is None else now
        master.sync(self.app, self.job.table)
        master.handle_failures(self.app, self.job, self.pool, self.bound, now)
        for t in self.job.table.due_restarts(now):
            master.request_container(self.app, self.spec, t, now)
        master.bind_gpus(self.app, self.job.table, self.pool, self.bound)

    def up(self, nodes: list[str] = NODES) -> Gang:
        """Adopted, allocated over ``nodes`` and registered (the cluster view is `run`'s to publish)."""
        master.adopt_initial(self.job.table, time.time())
        self.app.allocate_all(nodes)
        master.sync(self.app, self.job.table)
        for t in self.job.table.tasks:
            self.register(t.name)
        self.step()
        return self

    def wait_running(self) -> None:
        wait_until(lambda: all(t.state == TaskState.RUNNING for t in self.job.table.tasks), what="allocation")

    def run(self) -> Background[tuple[str, str]]:
        """master.run in a thread; the fake is closed at the test's end so the loop cannot outlive it."""
        am = Background(lambda: master.run(self.app, self.job, self.web), name="AM loop")
        wait_until(lambda: all(t.state != TaskState.WAITING for t in self.job.table.tasks), what="adoption")
        return am

    def one_more_loop(self) -> None:
        """Wait until the AM's loop has gone round at least once more from now (it polls YARN first)."""
        seen = self.app.polls
        wait_until(lambda: self.app.polls >= seen + 2, what="the AM's next loop")

    def view(self) -> dict[str, tuple[str, ...]]:
        raw = wait_until(lambda: self.app.kv.get(protocol.KV_CLUSTER), what="the cluster view")
        return wire.ClusterView.from_json(raw or b"").roles

    def assigned(self, name: str) -> tuple[int, ...]:
        t = self.task(name)
        return wire.GpuAssignment.from_json(self.app.kv[protocol.kv_task_gpus(t.role, t.index)]).gpus


@pytest.fixture
def gang(monkeypatch: pytest.MonkeyPatch) -> Any:
    made: list[Gang] = []

    def make(framework: str = "none", fields: dict[str, Any] | None = None, **roles: int | RoleSpec) -> Gang:
        made.append(Gang(monkeypatch, framework, fields or {}, roles))
        return made[-1]
    yield make
    for g in made:
        g.app.close()


def nm_answer(devices: int, yarn_bound: dict[int, str] | None = None) -> dict[str, Any]:
    """A NodeManager's GPU resource answer: its devices, and those YARN bound to containers."""
    return {"gpuDeviceInformation": {"gpu": [{"minor_number": d} for d in range(devices)]},
            "assignedGpuDevices": [{"minorNumber": d, "containerId": c} for d, c in (yarn_bound or {}).items()]}


@pytest.fixture
def nodes(monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], list[str]]:
    """What each node's NodeManager answers about its GPUs (set by the test), and who asked."""
    answers: dict[str, Any] = {}
    asked: list[str] = []
    monkeypatch.setattr(nodegpus, "node_gpu_info", lambda node: (asked.append(node), answers.get(node))[1])
    return answers, asked


# --- allocation and registration ---------------------------------------------------------------
def test_the_gang_s_own_containers_are_adopted_and_followed_from_requested_to_running(gang):
    g = gang(framework="tensorflow", chief=1, worker=2, ps=1)
    master.adopt_initial(g.job.table, 100.0)
    assert {t.container_id for t in g.job.table.tasks} == {c.id for c in g.app.get_containers()}
    assert all(t.state == TaskState.REQUESTED and t.requested_at == 100.0 for t in g.job.table.tasks)
    master.sync(g.app, g.job.table)
    assert all(t.state == TaskState.REQUESTED for t in g.job.table.tasks)
    start = datetime.now() - timedelta(seconds=3)
    g.app.allocate("worker_1", "node1:8042", start=start)
    master.sync(g.app, g.job.table)
    w1 = g.task("worker:1")
    assert (w1.state, w1.yarn_container_id, w1.host, w1.node_http_address) == (
        TaskState.RUNNING, g.app.container("worker_1").yarn_container_id, "node1", "node1:8042")
    assert w1.timeline["allocated"] == start.timestamp()
    assert [t.name for t in g.job.table.tasks if t.state == TaskState.REQUESTED] == ["chief:0", "worker:0", "ps:0"]
    assert g.app.requests == []  # the gang came with the application: nothing asked again


def test_a_registration_and_timeline_of_the_current_container_count_and_a_stale_one_does_not(gang, monkeypatch):
    g = gang(worker=2)
    master.adopt_initial(g.job.table, time.time())
    g.app.allocate_all(NODES)
    master.sync(g.app, g.job.table)
    address = g.register("worker:0", "node0:4000")
    monkeypatch.setenv("CONTAINER_ID", g.yarn_id("worker:0"))
    Timeline(g.app, "worker", 0).stamp("inputs_staged", 1234.5)
    stale = wire.Registration(address="elsewhere:1", container="container_1_0001_01_000999")
    g.app.kv[protocol.kv_task_addr("worker", 1)] = stale.to_json().encode()
    master.sync(g.app, g.job.table)
    w0, w1 = g.task("worker:0"), g.task("worker:1")
    assert (w0.address, w0.staging_s, w0.timeline["inputs_staged"]) == (address, 0.5, 1234.5)
    assert w1.address == "" and not g.job.table.all_registered()


# --- rendezvous ------------------------------------------------------------------------------------
def test_the_cluster_view_is_published_once_every_task_registered_with_each_role_s_addresses_by_index(gang):
    g = gang(framework="tensorflow", chief=1, worker=2, ps=1)
    am = g.run()
    g.app.allocate_all(NODES)
    g.wait_running()
    addresses = {name: g.register(name, f"{name.replace(':', '-')}:5000") for name in ("worker:1", "ps:0", "chief:0")}
    wait_until(lambda: sum(bool(t.address) for t in g.job.table.tasks) == 3, what="3 registrations")
    g.one_more_loop()
    assert protocol.KV_CLUSTER not in g.app.kv and "rendezvous" not in g.job.timeline  # worker:0 is missing
    addresses["worker:0"] = g.register("worker:0", "worker-0:5000")
    assert g.view() == {"chief": (addresses["chief:0"],), "ps": (addresses["ps:0"],),
                        "worker": (addresses["worker:0"], addresses["worker:1"])}
    puts = g.app.kv.puts
    gpu_keys = [protocol.kv_task_gpus(t.role, t.index) for t in g.job.table.tasks]
    assert max(puts.index(k) for k in gpu_keys) < puts.index(protocol.KV_CLUSTER)  # devices before the gang starts
    g.one_more_loop()
    assert puts.count(protocol.KV_CLUSTER) == 1 and "rendezvous" in g.job.timeline
    g.exit("chief:0", 0)
    assert am.result()[0] == "SUCCEEDED"


# --- the job's end -------------------------------------------------------------------------------
def test_ps_strategy_ends_when_the_chief_succeeds_and_stops_the_servers(gang):
    g = gang(framework="tensorflow", chief=1, worker=2, ps=1).up()
    am = g.run()
    g.exit("worker:0", 0)  # a worker ending first decides nothing
    g.one_more_loop()
    assert am.running and g.app.killed == []
    g.exit("chief:0", 0)
    assert am.result() == ("SUCCEEDED", "all 1 chief task(s) succeeded")
    assert sorted(g.app.killed) == ["ps_0", "worker_1"]
    assert [(t.name, t.state.value) for t in g.job.table.tasks] == [
        ("chief:0", "SUCCEEDED"), ("worker:0", "SUCCEEDED"), ("worker:1", "KILLED"), ("ps:0", "KILLED")]


def test_a_plain_job_needs_every_task_and_ends_with_nothing_to_stop(gang):
    g = gang(worker=2).up()
    am = g.run()
    g.exit("worker:1", 0)
    g.one_more_loop()
    assert am.running
    g.exit("worker:0", 0)
    assert am.result() == ("SUCCEEDED", "all 2 worker task(s) succeeded")
    assert g.app.killed == []


def test_the_evaluator_may_fail_without_failing_the_job_or_being_restarted(gang):
    g = gang(framework="tensorflow", chief=1, worker=1, ps=1, evaluator=1).up()
    am = g.run()
    g.exit("evaluator:0", 1, "eval crashed")
    wait_until(lambda: g.task("evaluator:0").state == TaskState.FAILED)
    g.one_more_loop()
    assert am.running and g.app.requests == [] and g.app.killed == []
    g.exit("chief:0", 0)
    assert am.result()[0] == "SUCCEEDED"
    assert "evaluator_0" not in g.app.killed and g.task("evaluator:0").exit_code == 1


def test_a_failed_task_fails_the_job_with_its_diagnostics_and_the_rest_are_stopped(gang):
    g = gang(worker=3).up()
    am = g.run()
    g.exit("worker:1", 3, "Traceback (most recent call last):\nValueError: bad shard")
    status, diagnostics = am.result()
    assert status == "FAILED" and diagnostics.endswith("ValueError: bad shard")
    assert diagnostics.startswith(f"task worker:1 failed (exit code 3) on {g.task('worker:1').host}")
    assert sorted(g.app.killed) == ["worker_0", "worker_2"]
    assert [t.state for t in g.job.table.tasks] == [TaskState.KILLED, TaskState.FAILED, TaskState.KILLED]


@pytest.mark.parametrize("yarn_state", ["KILLED", "FAILED"])
def test_a_container_that_ended_without_an_exit_record_fails_the_job_with_yarn_s_message(gang, yarn_state):
    g = gang(worker=2).up()
    am = g.run()
    g.app.finish("worker_0", yarn_state, "Container preempted by the scheduler")
    status, diagnostics = am.result()
    assert status == "FAILED" and g.task("worker:0").state == TaskState(yarn_state)
    assert "task worker:0 failed (Container preempted by the scheduler)" in diagnostics
    assert g.app.killed == ["worker_1"]


# --- restart policies ----------------------------------------------------------------------------
def test_never_leaves_a_failed_task_failed_and_asks_for_nothing(gang):
    g = gang(worker=2).up()
    g.exit("worker:1", 1)
    g.step()
    assert g.task("worker:1").state == TaskState.FAILED and g.task("worker:1").restarts == 0
    assert g.app.requests == [] and g.app.killed == []
    assert g.job.table.outcome()[0] == "FAILED"


def test_on_failure_restarts_only_that_task_after_its_backoff_where_it_ran_and_ignores_its_old_container(gang):
    g = gang(worker=RoleSpec("worker", 2, restart_policy="on-failure", max_restarts=2, restart_backoff_s=4)).up()
    w1 = g.task("worker:1")
    old_address, old_yarn_id = w1.address, w1.yarn_container_id
    g.exit("worker:1", 1, "CUDA error")
    g.step(now=1000.0)
    assert (w1.state, w1.restarts, w1.restart_at, w1.previous_address) == (TaskState.RESTARTING, 1, 1004.0, old_address)
    assert not any(k in g.app.kv for k in protocol.kv_task_keys("worker", 1))  # its old records are gone
    assert protocol.kv_task_addr("worker", 0) in g.app.kv and g.bound == {"worker:0"}
    g.step(now=1003.9)
    assert g.app.requests == []  # still backing off
    g.step(now=1004.0)
    [(service, env)] = g.app.requests
    assert (service, env[protocol.ENV_TASK_INDEX], env[protocol.ENV_PREVIOUS_ADDRESS]) == ("worker", "1", old_address)
    assert (w1.state, w1.container_id) == (TaskState.REQUESTED, "worker_2")
    g.app.finish("worker_1", "FAILED", "exit code 1")  # YARN reports the old container's end late
    g.exit("worker:1", 1, yarn_id=old_yarn_id)  # and so does its executor's last record
    g.step()
    assert w1.state == TaskState.REQUESTED and w1.exit_code is None and g.app.killed == []
    g.app.allocate("worker_2", "node1:8042")
    g.step()
    assert w1.state == TaskState.RUNNING and w1.yarn_container_id == g.app.container("worker_2").yarn_container_id


def test_on_failure_doubles_the_backoff_and_fails_the_job_after_max_restarts(gang):
    g = gang(worker=RoleSpec("worker", 1, restart_policy="on-failure", max_restarts=2, restart_backoff_s=3)).up()
    w0, now, delays = g.task("worker:0"), 0.0, []
    for _ in range(2):
        g.exit("worker:0", 1)
        g.step(now)
        delays.append(w0.restart_at - now)
        now = w0.restart_at
        g.step(now)
        g.app.allocate(w0.container_id)
        g.step(now)
        g.register("worker:0")
    assert delays == [3.0, 6.0] and len(g.app.requests) == 2
    g.exit("worker:0", 1, "still broken")
    g.step(now)
    assert w0.state == TaskState.FAILED and len(g.app.requests) == 2
    status, diagnostics = g.job.table.outcome()
    assert status == "FAILED" and "after 2 restart(s)" in diagnostics and diagnostics.endswith("still broken")


def test_on_failure_never_retries_a_permanent_exit_code(gang):
    g = gang(worker=RoleSpec("worker", 1, restart_policy="on-failure", permanent_exit_codes=(2,))).up()
    g.exit("worker:0", 2)
    g.step()
    assert g.task("worker:0").state == TaskState.FAILED and g.app.requests == []


def test_all_stops_every_task_and_drops_the_rendezvous_then_asks_for_the_whole_gang_again(gang):
    g = gang(framework="pytorch", worker=RoleSpec("worker", 3, restart_policy="all", max_restarts=1,
                                                  restart_backoff_s=5)).up()
    g.app.kv[protocol.KV_CLUSTER] = wire.ClusterView.of(g.job.table.cluster_view()).to_json().encode()
    g.job.timeline["rendezvous"] = 1.0
    g.exit("worker:2", 1)
    g.step(now=50.0)
    assert sorted(g.app.killed) == ["worker_0", "worker_1"]
    tasks = g.job.table.tasks
    assert all(t.state == TaskState.RESTARTING and t.restart_at == 55.0 and not t.previous_address for t in tasks)
    assert g.job.table.job_restarts == 1 and "rendezvous" not in g.job.timeline
    assert g.app.kv.get_prefix(protocol.KV_PREFIX) == {} and g.bound == set()
    g.step(now=55.0)
    assert [(s, e[protocol.ENV_TASK_INDEX]) for s, e in g.app.requests] == [("worker", "0"), ("worker", "1"),
                                                                           ("worker", "2")]
    assert not any(protocol.ENV_PREVIOUS_ADDRESS in e for _, e in g.app.requests)
    assert [t.container_id for t in tasks] == ["worker_3", "worker_4", "worker_5"]
    g.app.allocate_all(NODES)
    g.step()
    g.exit("worker:0", 1)  # a second failure: max_restarts (1) whole-job restarts are spent
    g.step(now=60.0)
    assert g.job.table.outcome()[0] == "FAILED" and len(g.app.requests) == 3


def test_run_restarts_a_failed_task_which_registers_again_gets_its_devices_and_the_job_succeeds(gang, nodes):
    answers, _ = nodes
    answers.update({n: nm_answer(2) for n in NODES})
    g = gang(worker=RoleSpec("worker", 2, gpus=1, restart_policy="on-failure", restart_backoff_s=0))
    am = g.run()
    g.app.allocate_all(NODES)
    g.wait_running()
    for name in ("worker:0", "worker:1"):
        g.register(name)
    first_view = g.view()
    g.exit("worker:1", 1)
    wait_until(lambda: g.task("worker:1").container_id == "worker_2", what="the restart's request")
    g.app.allocate("worker_2", NODES[1])
    wait_until(lambda: g.task("worker:1").state == TaskState.RUNNING)
    key = protocol.kv_task_gpus("worker", 1)
    assert key not in g.app.kv  # devices come only once the new container registers
    g.register("worker:1")
    wait_until(lambda: key in g.app.kv, what="the restarted task's devices")
    assert len(g.assigned("worker:1")) == 1 and g.view() == first_view  # it rejoins the same rendezvous
    g.exit("worker:0", 0)
    g.exit("worker:1", 0)
    assert am.result() == ("SUCCEEDED", "all 2 worker task(s) succeeded (1 task restart(s))")


def test_run_after_a_whole_job_restart_publishes_a_fresh_view_only_once_every_task_registered_again(gang):
    g = gang(framework="pytorch", worker=RoleSpec("worker", 2, restart_policy="all", restart_backoff_s=0))
    am = g.run()
    g.app.allocate_all(NODES)
    g.wait_running()
    for name in ("worker:0", "worker:1"):
        g.register(name, f"{name.replace(':', '-')}:1")
    assert g.view() == {"worker": ("worker-0:1", "worker-1:1")}
    g.exit("worker:0", 1)
    wait_until(lambda: [t.container_id for t in g.job.table.tasks] == ["worker_2", "worker_3"], what="new gang")
    assert protocol.KV_CLUSTER not in g.app.kv and g.app.killed == ["worker_1"]
    g.app.allocate_all(NODES)
    g.wait_running()
    g.register("worker:1", "worker-1:2")
    wait_until(lambda: g.task("worker:1").address)
    g.one_more_loop()
    assert protocol.KV_CLUSTER not in g.app.kv
    g.register("worker:0", "worker-0:2")
    assert g.view() == {"worker": ("worker-0:2", "worker-1:2")}
    for name in ("worker:0", "worker:1"):
        g.exit(name, 0)
    assert am.result()[0] == "SUCCEEDED" and g.job.table.job_restarts == 1


# --- gang timeouts -------------------------------------------------------------------------------
def test_containers_never_allocated_fail_the_job_naming_them_and_what_the_cluster_has_free(gang, monkeypatch):
    asked: list[str] = []
    monkeypatch.setenv(protocol.ENV_RM_WEB, "http://rm:8088")
    free = [NodeCapacity("a:8041", 16384, 8, 4, "RUNNING", 8192, 4, 0), NodeCapacity("b:8041", 16384, 8, 4,
                                                                                      "RUNNING", 2048, 4, 2)]
    monkeypatch.setattr(rmnodes, "fetch_nodes", lambda rm: asked.append(rm) or free)
    g = gang(worker=RoleSpec("worker", 3, memory_mb=4096, gpus=1), fields={"allocation_timeout_s": 1})
    am = g.run()
    g.app.allocate("worker_0", NODES[0])
    status, diagnostics = am.result()
    assert status == "FAILED" and asked == ["http://rm:8088"]
    assert diagnostics == ("2 of 3 worker container(s) not allocated after 1 s (each asks 4096 MiB, 1 vcore(s), "
                           "1 GPU(s)); the cluster's 2 node(s) have 10240 MiB, 8 vcore(s) and 2 of 8 GPU(s) free "
                           "(per node: a:8041 8192 MiB, 4 vcore(s), 0 GPU(s); b:8041 2048 MiB, 4 vcore(s), 2 GPU(s)); "
                           "worker needs 2 x (4096 MiB, 1 vcore(s), 1 GPU(s)) on single nodes and 0 fit: enough is "
                           "free in total, but a container cannot span nodes")
    assert sorted(g.app.killed) == ["worker_0", "worker_1", "worker_2"]  # the requests are released too


def test_a_task_that_never_registers_fails_the_job_naming_it_and_its_host(gang):
    g = gang(worker=2, fields={"registration_timeout_s": 30})
    am = g.run()
    g.app.allocate("worker_0", NODES[0])  # just started: not late
    g.app.allocate("worker_1", NODES[1], start=datetime.now() - timedelta(seconds=31))
    status, diagnostics = am.result()
    assert status == "FAILED"
    assert diagnostics.startswith("1 task(s) not registered 30 s after their container started (worker:1 on node1)")
    assert sorted(g.app.killed) == ["worker_0", "worker_1"]


# --- the --max-runtime watchdog --------------------------------------------------------------------
def test_a_job_past_its_max_runtime_fails_naming_the_limit_and_what_still_ran(gang):
    g = gang(framework="tensorflow", fields={"max_runtime_s": 2}, chief=1, worker=1, ps=1).up()
    g.job.timeline["submitted"] = time.time() - 1  # its clock runs from the submission
    am = g.run()
    g.exit("worker:0", 0)  # one task already done: not among those still running
    status, diagnostics = am.result()
    assert status == "FAILED"
    assert re.fullmatch(r"the job ran past its maximum runtime of 2s \(max_runtime_s 2, --max-runtime\) and was "
                        r"stopped [23] s after submission; still running: chief:0, ps:0", diagnostics), diagnostics
    assert sorted(g.app.killed) == ["chief_0", "ps_0"]
    assert {t.name: t.state.value for t in g.job.table.tasks} == {
        "chief:0": "KILLED", "worker:0": "SUCCEEDED", "ps:0": "KILLED"}
    assert [e.kind for e in g.job.events.recent()] == []  # no task failed: the job's clock ended it


def test_without_max_runtime_a_long_job_is_not_stopped(gang):
    g = gang(worker=1).up()
    g.job.timeline["submitted"] = time.time() - 10 * 86400  # ten days ago: no limit is no limit
    am = g.run()
    g.one_more_loop()
    assert am.running
    g.exit("worker:0", 0)
    assert am.result()[0] == "SUCCEEDED"


def test_the_max_runtime_diagnostics_name_at_most_eight_tasks():
    spec = JobSpec(name="j", command=("python", "t.py"), roles={"worker": RoleSpec("worker", 12)}).validate()
    table = TaskTable.for_job(spec)
    text = master.over_max_runtime(5400, 5401.4, table)
    assert text.startswith("the job ran past its maximum runtime of 1h30m (max_runtime_s 5400, --max-runtime) "
                           "and was stopped 5401 s after submission; still running: worker:0, worker:1,")
    assert text.endswith("worker:7 and 4 more")


# --- GPU binding ---------------------------------------------------------------------------------
def test_tasks_on_one_node_get_disjoint_devices_and_each_node_is_asked_once(gang, nodes):
    answers, asked = nodes
    answers.update({n: nm_answer(4) for n in NODES})
    g = gang(worker=RoleSpec("worker", 4, gpus=2)).up()
    by_node: dict[str, list[int]] = {}
    for t in g.job.table.tasks:
        assert g.assigned(t.name) == tuple(t.gpus) and len(t.gpus) == 2 and t.gpu_binding == "tfyarn"
        by_node.setdefault(t.host, []).extend(t.gpus)
    assert {h: sorted(d) for h, d in by_node.items()} == {"node0": [0, 1, 2, 3], "node1": [0, 1, 2, 3]}
    assert sorted(asked) == NODES


def test_a_node_with_too_few_free_devices_gives_what_it_has_and_says_so(gang, nodes, caplog, monkeypatch):
    monkeypatch.setattr(logging.getLogger(logfmt.AM_LOGGER), "handlers", [caplog.handler])  # however it is set up
    answers, _ = nodes
    answers["node0:8042"] = nm_answer(4, yarn_bound={0: "container_other_app"})
    g = gang(worker=RoleSpec("worker", 2, gpus=2)).up(NODES[:1])
    assert (g.assigned("worker:0"), g.assigned("worker:1")) == ((1, 2), (3,))  # device 0 is YARN's: never handed out
    assert "worker:1 asked 2 GPU(s) but node0 has only 1 unbound; it gets those" in caplog.text


def test_devices_yarn_bound_are_kept_and_a_task_without_gpus_gets_none(gang, nodes):
    answers, asked = nodes
    g = gang(framework="tensorflow", chief=1, worker=RoleSpec("worker", 1, gpus=2))
    master.adopt_initial(g.job.table, time.time())
    g.app.allocate_all(NODES)
    master.sync(g.app, g.job.table)
    g.register("worker:0", gpus=(5, 7), binding="yarn")
    g.register("chief:0")
    g.step()
    assert (g.assigned("worker:0"), g.task("worker:0").gpu_binding) == ((5, 7), "yarn")
    assert (g.assigned("chief:0"), g.task("chief:0").gpu_binding) == ((), "none")
    assert asked == []  # nobody had to ask a NodeManager


def test_a_failed_task_s_devices_go_back_to_the_node_for_its_next_container(gang, nodes):
    answers, _ = nodes
    answers["node0:8042"] = nm_answer(2)
    g = gang(worker=RoleSpec("worker", 2, gpus=1, restart_policy="on-failure", restart_backoff_s=0)).up(NODES[:1])
    before = g.assigned("worker:1")
    g.exit("worker:1", 1)
    g.step()
    g.app.allocate("worker_2", "node0:8042")
    g.step()
    g.register("worker:1")
    g.step()
    assert g.assigned("worker:1") == before and set(before).isdisjoint(g.assigned("worker:0"))


# --- the AM's main -------------------------------------------------------------------------------
def test_main_runs_the_job_from_its_spec_and_ends_the_application_with_its_outcome(gang, monkeypatch):
    g = gang(worker=1)
    master.adopt_initial(g.job.table, time.time())  # the test's own view of the containers, for its records
    saved: list[tuple[str, str]] = []
    monkeypatch.setenv(protocol.ENV_JOB, protocol.encode_env(g.spec.to_dict()))
    monkeypatch.setattr(master.skein.ApplicationClient, "from_current", staticmethod(lambda: g.app))
    monkeypatch.setattr(master, "page_server", FakeStatusServer)
    monkeypatch.setattr(master, "save_status", lambda body, user, app_id, readers=(): saved.append((user, app_id)))
    am = Background(master.main, name="AM main")
    g.app.allocate("worker_0", NODES[0])
    g.register("worker:0")
    g.app.kv.wait(protocol.KV_CLUSTER)
    g.exit("worker:0", 0)
    assert am.result() == 0 and g.app.final == ("SUCCEEDED", "all 1 worker task(s) succeeded")
    assert protocol.UI_STATUS_ROUTE in g.app.ui.pages and saved == [(master.taskenv.job_user(), g.app.id)]
    assert protocol.KV_STATUS in g.app.kv


def test_main_with_an_unreadable_spec_ends_the_application_failed_not_hanging(monkeypatch):
    app = FakeApp()
    monkeypatch.setenv(protocol.ENV_JOB, protocol.encode_env({"name": "j", "roles": {"worker": {"bogus": 1}}}))
    monkeypatch.setattr(master.skein.ApplicationClient, "from_current", staticmethod(lambda: app))
    monkeypatch.setattr(master, "page_server", FakeStatusServer)
    assert master.main() == 1
    assert app.final is not None and app.final[0] == "FAILED"
    assert app.final[1].startswith("tfyarn AM error: SpecError: roles.worker")


def test_a_heartbeat_changes_the_pages_signature_but_not_the_shape_the_pushed_copy_follows(gang):
    """The key-value copy of the status goes to the owner's `wait` (tfyarn.docwatch): a heartbeat alone
    rewrites it at most every KV_LIVE_EVERY_S, a task's state change at once."""
    g = gang(worker=1)
    job, t = g.job, g.job.table.tasks[0]
    page, shape = job.signature(), job.signature(live=False)
    t.progress = wire.Progress(time=time.time(), step=3, metrics={"loss": 0.5})
    assert job.signature() != page and job.signature(live=False) == shape
    t.state = TaskState.SUCCEEDED
    assert job.signature(live=False) != shape
    assert master.KV_LIVE_EVERY_S > master.DOC_REFRESH_S
