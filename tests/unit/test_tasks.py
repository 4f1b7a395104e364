from appmaster.am.tasks import TaskTable
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


def policy_table(policy, max_restarts=2, permanent=(), backoff=2):
    role = RoleSpec("worker", 2, restart_policy=policy, max_restarts=max_restarts, restart_backoff_s=backoff,
                    permanent_exit_codes=tuple(permanent))
    return TaskTable.for_job(JobSpec(name="j", command=("x",), roles={"worker": role}).validate())


def test_restart_policies_decide_what_a_failure_means():
    from appmaster.am.tasks import FAIL, RESTART, RESTART_ALL

    assert policy_table("never").failure_action(set_state(policy_table("never"), "worker:0", TaskState.FAILED, 1)) \
        == FAIL
    t = policy_table("on-failure", max_restarts=1)
    task = set_state(t, "worker:1", TaskState.FAILED, 137)
    assert t.failure_action(task) == RESTART
    task.reset(restart_at=10.0, keep_address=True)
    assert task.state == TaskState.RESTARTING and task.restarts == 1 and task.exit_code is None
    set_state(t, "worker:1", TaskState.FAILED, 137)
    assert t.failure_action(task) == FAIL  # max_restarts used up
    t = policy_table("all", max_restarts=1)
    assert t.failure_action(set_state(t, "worker:0", TaskState.KILLED)) == RESTART_ALL  # a lost container too
    t.job_restarts = 1
    assert t.failure_action(t.tasks[0]) == FAIL


def test_permanent_exit_codes_are_never_retried():
    from appmaster.am.tasks import FAIL, RESTART

    t = policy_table("on-failure", permanent=(2,))
    assert t.failure_action(set_state(t, "worker:0", TaskState.FAILED, 2)) == FAIL
    assert t.failure_action(set_state(t, "worker:1", TaskState.FAILED, 1)) == RESTART


def test_restarting_tasks_do_not_fail_the_job_and_wait_out_their_backoff():
    t = policy_table("on-failure", backoff=3)
    task = set_state(t, "worker:0", TaskState.FAILED, 137)
    task.address, task.host = "h:4000", "h"
    assert t.backoff_s(task, 0) == 3 and t.backoff_s(task, 2) == 12  # doubled each time
    task.reset(restart_at=100.0 + t.backoff_s(task, 0), keep_address=True)
    assert task.previous_address == "h:4000" and task.history[0].endswith("FAILED (exit code 137)")
    assert t.outcome() is None
    assert t.due_restarts(102.0) == [] and t.due_restarts(103.0) == [task]
    set_state(t, "worker:1", TaskState.SUCCEEDED, 0)
    task.state, task.exit_code = TaskState.SUCCEEDED, 0
    assert t.outcome() == ("SUCCEEDED", "all 2 worker task(s) succeeded (1 task restart(s))")


def test_gang_timeouts_name_what_is_missing():
    role = RoleSpec("worker", 4, memory_mb=1024, gpus=1)
    t = TaskTable.for_job(JobSpec(name="j", command=("x",), roles={"worker": role}).validate())
    for task in t.tasks:
        task.state, task.requested_at = TaskState.REQUESTED, 0.0
    for task in t.tasks[:2]:
        task.state, task.timeline["allocated"], task.host = TaskState.RUNNING, 1.0, "h"
    assert t.timed_out(100.0, 120, 900) is None
    msg = t.timed_out(121.0, 120, 900, "the cluster's 1 node(s) have 0 of 4 GPU(s) free")
    assert msg == ("2 of 4 worker container(s) not allocated after 120 s (each asks 1024 MiB, 1 vcore(s), "
                   "1 GPU(s)); the cluster's 1 node(s) have 0 of 4 GPU(s) free")
    for task in t.tasks[2:]:
        task.state, task.timeline["allocated"], task.address = TaskState.RUNNING, 1.0, "h:1"
    assert t.timed_out(500.0, 120, 900) is None
    assert "2 task(s) not registered 900 s after" in t.timed_out(902.0, 120, 900)
