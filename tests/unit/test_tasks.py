from appmaster.tasks import TaskTable
from tfyarn.spec import JobSpec, RoleSpec
from tfyarn.status import TaskState


def table(framework="none", **roles):
    spec = JobSpec(name="j", command=("x",), framework=framework,
                   roles={r: RoleSpec(r, n) for r, n in roles.items()}).validate()
    return TaskTable.for_job(spec)


def set_state(t, name, state, code=None):
    task = next(x for x in t.tasks if x.name == name)
    task.state = state
    task.exit_code = code
    return task


def test_one_task_per_instance_with_stable_names():
    assert [x.name for x in table(worker=3).tasks] == ["worker:0", "worker:1", "worker:2"]


def test_plain_jobs_need_every_task():
    t = table(worker=2)
    assert t.outcome() is None
    set_state(t, "worker:0", TaskState.SUCCEEDED, 0)
    assert t.outcome() is None
    set_state(t, "worker:1", TaskState.SUCCEEDED, 0)
    assert t.outcome() == ("SUCCEEDED", "all 2 worker task(s) succeeded")


def test_first_failure_decides_with_exit_code_and_stderr():
    t = table(worker=2)
    task = set_state(t, "worker:1", TaskState.FAILED, 3)
    task.host = "node7"
    task.stderr_tail = "Traceback ...\nValueError: bad"
    status, diag = t.outcome()
    assert status == "FAILED"
    assert "worker:1 failed (exit code 3) on node7" in diag
    assert diag.endswith("ValueError: bad")


def test_killed_task_without_exit_record_fails_the_job():
    t = table(worker=1)
    set_state(t, "worker:0", TaskState.KILLED).exit_message = "Container preempted"
    assert t.outcome() == ("FAILED", "task worker:0 failed (Container preempted) on unknown host")


def test_ps_strategy_succeeds_with_its_chief_while_servers_still_run():
    t = table("tensorflow", chief=1, worker=2, ps=1, evaluator=1)
    for name in ("worker:0", "worker:1", "ps:0", "evaluator:0"):
        set_state(t, name, TaskState.RUNNING)
    assert t.outcome() is None
    set_state(t, "chief:0", TaskState.SUCCEEDED, 0)
    assert t.outcome() == ("SUCCEEDED", "all 1 chief task(s) succeeded")


def test_failing_chief_fails_at_once_and_a_failing_evaluator_does_not():
    t = table("tensorflow", chief=1, worker=2, ps=1, evaluator=1)
    set_state(t, "evaluator:0", TaskState.FAILED, 1)
    assert t.outcome() is None
    set_state(t, "chief:0", TaskState.FAILED, 2)
    assert t.outcome()[0] == "FAILED" and "chief:0 failed (exit code 2)" in t.outcome()[1]


def test_evaluator_must_succeed_when_configured():
    spec = JobSpec(name="j", command=("x",), framework="tensorflow", evaluator_may_fail=False,
                   roles={"worker": RoleSpec("worker", 2), "evaluator": RoleSpec("evaluator", 1)}).validate()
    t = TaskTable.for_job(spec)
    set_state(t, "evaluator:0", TaskState.FAILED, 1)
    assert t.outcome()[0] == "FAILED"


def test_multi_worker_tf_needs_all_workers_but_not_the_evaluator():
    t = table("tensorflow", worker=2, evaluator=1)
    set_state(t, "worker:0", TaskState.SUCCEEDED, 0)
    assert t.outcome() is None
    set_state(t, "worker:1", TaskState.SUCCEEDED, 0)
    assert t.outcome()[0] == "SUCCEEDED"


def test_cluster_view_orders_addresses_by_index():
    t = table("tensorflow", worker=2, ps=1, chief=1)
    addrs = {"chief:0": "c:1", "worker:0": "w0:2", "worker:1": "w1:3", "ps:0": "p:4"}
    assert not t.all_registered()
    for task in t.tasks:
        task.address = addrs[task.name]
    assert t.all_registered()
    assert t.cluster_view() == {"chief": ["c:1"], "ps": ["p:4"], "worker": ["w0:2", "w1:3"]}
