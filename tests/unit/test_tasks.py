from appmaster.tasks import TaskTable
from tfyarn.spec import JobSpec, RoleSpec
from tfyarn.status import TaskState


def table(n=3):
    return TaskTable.for_job(JobSpec(name="j", command=("x",), roles={"worker": RoleSpec("worker", n)}))


def test_one_task_per_instance_with_stable_names():
    t = table(3)
    assert [x.name for x in t.tasks] == ["worker:0", "worker:1", "worker:2"]


def test_undecided_until_all_succeed():
    t = table(2)
    assert t.outcome() is None
    t.tasks[0].state = TaskState.SUCCEEDED
    assert t.outcome() is None
    t.tasks[1].state = TaskState.SUCCEEDED
    assert t.outcome() == ("SUCCEEDED", "all 2 task(s) succeeded")


def test_first_failure_decides_with_exit_code_and_stderr():
    t = table(2)
    t.tasks[1].state = TaskState.FAILED
    t.tasks[1].exit_code = 3
    t.tasks[1].host = "node7"
    t.tasks[1].stderr_tail = "Traceback ...\nValueError: bad"
    status, diag = t.outcome()
    assert status == "FAILED"
    assert "worker:1 failed (exit code 3) on node7" in diag
    assert diag.endswith("ValueError: bad")


def test_killed_task_without_exit_record_fails_the_job():
    t = table(1)
    t.tasks[0].state = TaskState.KILLED
    t.tasks[0].exit_message = "Container preempted"
    assert t.outcome() == ("FAILED", "task worker:0 failed (Container preempted) on unknown host")
