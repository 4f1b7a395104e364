import pytest

from tfyarn.errors import SpecError
from tfyarn.fields import duration_text, parse_duration
from tfyarn.spec import JobSpec, RoleSpec, parse_memory


@pytest.mark.parametrize("text,mb", [("512", 512), ("512m", 512), ("4g", 4096), ("4GB", 4096),
                                     ("1.5g", 1536), ("2Gi", 2048), (1024, 1024), ("1t", 1048576)])
def test_parse_memory(text, mb):
    assert parse_memory(text) == mb


@pytest.mark.parametrize("text", ["3000000g", "1025t", "1" + "0" * 400 + "g", 2**30 + 1, 2**64])
def test_parse_memory_refuses_what_yarn_cannot_carry(text):
    with pytest.raises(SpecError, match="above the maximum of 1073741824 MiB"):
        parse_memory(text, "--worker-memory")


def test_parse_memory_takes_the_maximum_and_digits_only():
    assert parse_memory("1024t") == 2**30
    with pytest.raises(SpecError, match="is not a memory size"):
        parse_memory("\u0663g")  # an Arabic-Indic 3: float() takes it, a size does not


@pytest.mark.parametrize("text,seconds", [("90", 90), ("90s", 90), ("30m", 1800), ("2h", 7200), ("1h30m", 5400),
                                          ("1d2h3m4s", 93784), (" 2H ", 7200), (45, 45), ("0", 0)])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "30m2h", "1h1h", "1.5h", "-5m", "1h 30m", "h", True, "\u0663m"])
def test_parse_duration_refuses_what_is_not_one(text):
    with pytest.raises(SpecError, match="--max-runtime: .* is not a duration; use e.g. 90s, 30m, 2h or 1h30m"):
        parse_duration(text, "--max-runtime")


@pytest.mark.parametrize("seconds", [0, 1, 59, 60, 90, 3600, 5400, 86400, 93784])
def test_duration_text_reads_back(seconds):
    assert parse_duration(duration_text(seconds)) == seconds


def test_max_runtime_from_yaml_takes_seconds_or_a_duration():
    base = {"name": "j", "command": ["python", "t.py"], "roles": {"worker": {"instances": 1}}}
    assert JobSpec.from_dict({**base, "max_runtime_s": "1h30m"}).validate().max_runtime_s == 5400
    assert JobSpec.from_dict({**base, "max_runtime_s": 600}).validate().max_runtime_s == 600
    assert JobSpec.from_dict(base).validate().max_runtime_s == 0
    with pytest.raises(SpecError, match="max_runtime_s: 'an hour' is not a duration"):
        JobSpec.from_dict({**base, "max_runtime_s": "an hour"})


def test_env_values_are_data_now_and_survive_the_encoded_spec():
    from tfyarn import protocol

    value = '$(touch PWNED) "q" `b` \\ $HOME\nline2\ttab'
    j = job(env={"A": value, "OMP_NUM_THREADS": "2"}).validate()
    assert JobSpec.from_dict(protocol.decode_env(protocol.encode_env(j.to_dict()))).env["A"] == value


@pytest.mark.parametrize("name", ["a.py", "A_b-c+1.tar.gz", ".hidden", "x" * 255])
def test_safe_file_names(name):
    job(files=(f"/some dir/{name}",)).validate()  # only the base name lands in the launch script


@pytest.mark.parametrize("name", ["a b", "-x", "x" * 256, "a$b", "a'b", "a;b", "a`b", "pyenv", "tfyarn-code", "."])
def test_unsafe_file_names(name):
    with pytest.raises(SpecError, match="rename it"):
        job(files=(name,)).validate()


def test_role_name_in_the_role_mapping_must_match_its_key():
    d = job().validate().to_dict()
    d["roles"]["worker"]["name"] = "worker"
    assert JobSpec.from_dict(d).roles["worker"].name == "worker"
    d["roles"]["worker"]["name"] = "other"
    with pytest.raises(SpecError, match="roles.worker.name: a role's name is its key"):
        JobSpec.from_dict(d)


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


def test_valid_job_round_trips_through_dict_and_the_am_env():
    from tfyarn import protocol

    j = job(env={"A": "1"}, tags=("t",), files=("a.py",)).validate()
    assert JobSpec.from_dict(j.to_dict()) == j
    assert JobSpec.from_dict(protocol.decode_env(protocol.encode_env(j.to_dict()))) == j


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
    (dict(env={"TF_CONFIG": "{}"}), "env: TF_CONFIG is set by tfyarn"),
    (dict(env={"A\n": "x"}), "not a valid environment variable name"),
    (dict(env={"A": "x\0"}), "env.A: .* holds the control character"),
    (dict(files=("$(touch PWNED).py",)), "files: .* rename it"),
    (dict(files=('a"b.py',)), "files: .* rename it"),
    (dict(name="a\nb"), "name: .* holds the control character"),
    (dict(queue="q\x07"), "queue: .* holds the control character"),
    (dict(tags=("t\r",)), "tags\\[0\\]: .* control character"),
    (dict(node_label="\u2028"), "node_label: .* control character"),
    (dict(roles={"worker": RoleSpec("worker", 1, node_label="x\n")}), "roles.worker.node_label"),
    (dict(roles={"worker\n": RoleSpec("worker\n", 1)}), "role names start with a letter"),
    (dict(roles={"worker": RoleSpec("worker", 1, memory_mb=2**30 + 1)}), "roles.worker.memory_mb: must be at most"),
    (dict(roles={"worker": RoleSpec("worker", 2**31)}), "roles.worker.instances: must be at most 2147483647"),
    (dict(roles={"worker": RoleSpec("worker", 1, vcores=2**31)}), "roles.worker.vcores: must be at most"),
    (dict(am_memory_mb=2**31), "am_memory_mb: must be at most 1073741824"),
    (dict(view_acls=("bob\n",)), "view_acls"),
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


def tf(**roles):
    return JobSpec(name="j", command=("python", "chief.py"), framework="tensorflow",
                   roles={r: RoleSpec(r, n) for r, n in roles.items()}).validate()


def test_ps_strategy_defaults_servers_and_lets_the_chief_decide():
    from tfyarn.frameworks.tensorflow import SERVER_COMMAND, TensorFlow

    job = tf(chief=1, worker=2, ps=1, evaluator=1)
    assert TensorFlow.ps_mode(job)
    assert job.command_for("ps") == job.command_for("worker") == SERVER_COMMAND
    assert job.command_for("chief") == job.command_for("evaluator") == ("python", "chief.py")
    assert job.required_roles() == {"chief"} and job.tolerated_roles() == {"evaluator"}


def test_multi_worker_tf_runs_the_command_everywhere_and_needs_every_worker():
    from tfyarn.frameworks.tensorflow import TensorFlow

    job = tf(worker=2)
    assert not TensorFlow.ps_mode(job) and job.command_for("worker") == ("python", "chief.py")
    assert job.required_roles() == {"worker"}


def test_a_role_command_overrides_the_default():
    job = JobSpec(name="j", command=("python", "c.py"), framework="tensorflow",
                  roles={"chief": RoleSpec("chief", 1), "ps": RoleSpec("ps", 1, command=("python", "myps.py"))})
    assert job.validate().command_for("ps") == ("python", "myps.py")


def test_pytorch_processes_default_to_gpus():
    from tfyarn.frameworks import PYTORCH

    assert PYTORCH.processes(RoleSpec("worker", 2, gpus=4)) == 4
    assert PYTORCH.processes(RoleSpec("worker", 2)) == 1
    assert PYTORCH.processes(RoleSpec("worker", 2, gpus=4, nproc_per_node=2)) == 2


def test_admission_names_the_limit():
    from tfyarn.admission import NodeCapacity, check_fits

    nodes = [NodeCapacity("a", 8192, 8, 4), NodeCapacity("b", 16384, 4, 0)]
    ok = JobSpec(name="j", command=("x",), roles={"worker": RoleSpec("worker", 9, memory_mb=16384, gpus=4)})
    check_fits(ok.validate(), nodes)  # per container, not in total: each fits some node
    with pytest.raises(SpecError, match="roles.worker.gpus: each worker container asks 5 GPU.* offers 4"):
        check_fits(JobSpec(name="j", command=("x",), roles={"worker": RoleSpec("worker", 1, gpus=5)}), nodes)
    with pytest.raises(SpecError, match="roles.worker.memory_mb: .* asks 20000 MiB .* offers 16384"):
        check_fits(JobSpec(name="j", command=("x",), roles={"worker": RoleSpec("worker", 1, memory_mb=20000)}), nodes)
    with pytest.raises(SpecError, match="no RUNNING NodeManager"):
        check_fits(ok, [])


def test_scheduler_limits_and_resource_types_are_named():
    from tfyarn.admission import SchedulerLimits, check_limits

    limits = SchedulerLimits.from_conf({"yarn.scheduler.maximum-allocation-mb": "8192",
                                        "yarn.scheduler.maximum-allocation-vcores": "4",
                                        "yarn.resource-types": "yarn.io/gpu"})
    ok = JobSpec(name="j", command=("x",), roles={"worker": RoleSpec("worker", 2, memory_mb=8192, gpus=1)})
    check_limits(ok.validate(), limits, 768)
    big = JobSpec(name="j", command=("x",), roles={"worker": RoleSpec("worker", 1, memory_mb=10240)})
    with pytest.raises(SpecError, match=r"roles.worker.memory_mb: each worker container asks 10240 MiB, above "
                                        r"the scheduler's maximum container size of 8192 MiB"):
        check_limits(big, limits, 768)
    with pytest.raises(SpecError, match=r"am_memory_mb: each ApplicationMaster container asks 9000 MiB"):
        check_limits(ok, limits, 9000)
    cores = JobSpec(name="j", command=("x",), roles={"worker": RoleSpec("worker", 1, vcores=8)})
    with pytest.raises(SpecError, match=r"roles.worker.vcores: .* maximum of 4"):
        check_limits(cores, limits, 768)
    no_gpu = SchedulerLimits.from_conf({"yarn.resource-types": ""})
    with pytest.raises(SpecError, match=r"roles.worker.gpus: this cluster defines no yarn.io/gpu resource"):
        check_limits(ok, no_gpu, 768)


@pytest.mark.parametrize("tags,msg", [(("caf\u00e9",), "printable ASCII"), (("x" * 101,), "at most 100"),
                                      (tuple(f"t{i}" for i in range(9)), "at most 8")])
def test_tags_the_resourcemanager_would_refuse(tags, msg):
    with pytest.raises(SpecError, match=msg):
        job(tags=tags).validate()
    job(tags=tags[:8] if len(tags) > 8 else ("x" * 100,)).validate()
