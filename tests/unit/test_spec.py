import pytest

from tfyarn.errors import SpecError
from tfyarn.spec import JobSpec, RoleSpec, parse_memory


@pytest.mark.parametrize("text,mb", [("512", 512), ("512m", 512), ("4g", 4096), ("4GB", 4096),
                                     ("1.5g", 1536), ("2Gi", 2048), (1024, 1024), ("1t", 1048576)])
def test_parse_memory(text, mb):
    assert parse_memory(text) == mb


@pytest.mark.parametrize("text", ["banana", "", "4x", "-1g", "g", "12 34"])
def test_parse_memory_rejects_garbage(text):
    with pytest.raises(SpecError, match="is not a memory size"):
        parse_memory(text, "--worker-memory")


def test_parse_memory_rejects_tiny():
    with pytest.raises(SpecError, match="below the minimum"):
        parse_memory("64m")


def job(**kw):
    base = dict(name="j", command=("python", "x.py"), roles={"worker": RoleSpec("worker", 2)})
    base.update(kw)
    return JobSpec(**base)


def test_valid_job_round_trips_through_dict_and_json():
    j = job(env={"A": "1"}, tags=("t",)).validate()
    assert JobSpec.from_dict(j.to_dict()) == j
    assert JobSpec.from_json(j.to_json()) == j


@pytest.mark.parametrize("kw,msg", [
    (dict(command=()), "no command given"),
    (dict(name=" "), "name: must not be empty"),
    (dict(roles={}), "at least one role"),
    (dict(roles={"worker": RoleSpec("worker", 0)}), "roles.worker.instances: must be at least 1"),
    (dict(roles={"worker": RoleSpec("worker", -2)}), "roles.worker.instances: must be at least 0"),
    (dict(roles={"worker": RoleSpec("worker", 1, gpus=-1)}), "roles.worker.gpus"),
    (dict(roles={"worker": RoleSpec("worker", 1, vcores=0)}), "roles.worker.vcores"),
    (dict(roles={"w": RoleSpec("worker", 1)}), "key and role name"),
    (dict(framework="mxnet"), "framework"),
    (dict(env={"1BAD": "x"}), "not a valid environment variable name"),
    (dict(env={"A": 'say "hi"'}), "double quote"),
    (dict(max_attempts=0), "max_attempts"),
    (dict(files=("a/x.py", "b/x.py")), "two files would land as 'x.py'"),
])
def test_invalid_jobs_name_the_field(kw, msg):
    with pytest.raises(SpecError, match=msg):
        job(**kw).validate()


def test_unknown_keys_are_named():
    d = job().validate().to_dict()
    d["wokers"] = 3
    with pytest.raises(SpecError, match="unknown key\\(s\\) wokers"):
        JobSpec.from_dict(d)
    d = job().validate().to_dict()
    d["roles"]["worker"]["gpu"] = 1
    with pytest.raises(SpecError, match="roles.worker: unknown key\\(s\\) gpu"):
        JobSpec.from_dict(d)


def test_role_memory_accepts_sizes_in_dicts():
    d = job().validate().to_dict()
    d["roles"]["worker"]["memory_mb"] = "3g"
    assert JobSpec.from_dict(d).roles["worker"].memory_mb == 3072


def test_command_must_be_a_list():
    d = job().validate().to_dict()
    d["command"] = "python x.py"
    with pytest.raises(SpecError, match="list of arguments"):
        JobSpec.from_dict(d)
