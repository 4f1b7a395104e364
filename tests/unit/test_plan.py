from pathlib import Path

import yaml

from tfyarn import protocol
from tfyarn.plan import PlanContext, plan
from tfyarn.spec import JobSpec, RoleSpec

GOLDEN = Path(__file__).parent / "golden"
CTX = PlanContext(python="/opt/env/bin/python")


def two_workers() -> JobSpec:
    worker = RoleSpec("worker", instances=2, memory_mb=1024, vcores=2, gpus=1)
    return JobSpec(name="demo", command=("python", "-c", "print('hi, \"you\"')"), roles={"worker": worker},
                   queue="research", env={"MODE": "test"}, tags=("team-a",),
                   files=("/opt/data/vocab.txt",)).validate()


def test_plan_matches_golden_yaml():
    """The whole request, compared as text: any change to what YARN receives shows up here."""
    got = yaml.safe_load(plan(two_workers(), CTX).to_yaml())
    want = yaml.safe_load((GOLDEN / "plan_two_workers.yaml").read_text())
    for doc in (got, want):
        doc["tags"].sort()  # skein keeps tags in a set: their order is arbitrary
    assert got == want


def test_am_receives_the_spec_it_was_planned_from():
    spec = two_workers()
    app = plan(spec, CTX)
    assert JobSpec.from_dict(protocol.decode_env(app.master.env[protocol.ENV_JOB])) == spec


def test_env_values_are_safe_for_yarns_launch_script():
    app = plan(two_workers(), CTX)
    for env in [app.master.env, *(s.env for s in app.services.values())]:
        for value in env.values():
            assert not any(c in value for c in '"`\\\n'), value


def test_user_env_never_reaches_yarns_launch_script_and_travels_encoded():
    """YARN writes launch-script env unquoted: a value like $(cmd) would run there (issue 11)."""
    hostile = {"FOO": "$(touch /tmp/pwned)", "BAR": 'a"b`c\\d'}
    spec = JobSpec(name="demo", command=("python", "t.py"), roles={"worker": RoleSpec("worker")}, env=hostile)
    app = plan(spec, CTX)
    for env in [app.master.env, *(s.env for s in app.services.values())]:
        assert not set(hostile) & set(env)
        assert not any("$(" in v for v in env.values())
    from tfyarn import taskenv

    task = taskenv.task_env(spec, "worker", 0, "application_1_0001")
    assert protocol.decode_env(task[protocol.ENV_USER_ENV]) == hostile


def test_the_gang_is_requested_with_the_app_and_failures_are_left_to_the_tfyarn_am():
    spec = two_workers()
    app = plan(spec, CTX)
    worker = app.services["worker"]
    assert worker.instances == 2 and worker.allow_failures and worker.max_restarts == 0
    assert JobSpec.from_dict(protocol.decode_env(worker.env[protocol.ENV_JOB])) == spec
    assert worker.resources.gpus == 1 and worker.resources.memory == 1024
    assert "appmaster.executor" in worker.script and "appmaster.am" in app.master.script
