"""One object per framework: its roles, rules, default commands, task env, command and port."""
import json

import pytest

from appmaster.executor.threads import thread_env
from tfyarn import frameworks
from tfyarn.errors import SpecError
from tfyarn.frameworks import NONE, PYTORCH, TENSORFLOW
from tfyarn.frameworks.tensorflow import SERVER_COMMAND
from tfyarn.spec import JobSpec, RoleSpec

VIEW = {"chief": ["h0:1000"], "worker": ["h1:1001", "h2:1002"], "ps": ["h3:1003"], "evaluator": ["h4:1004"]}


def job(framework, **roles):
    """An unvalidated job with ``roles`` as name=instances or name=RoleSpec."""
    return JobSpec(name="j", command=("python", "t.py"), framework=framework,
                   roles={r: n if isinstance(n, RoleSpec) else RoleSpec(r, n) for r, n in roles.items()})


def test_the_registry_finds_each_framework_by_its_name_in_a_stable_order():
    assert frameworks.NAMES == ("none", "tensorflow", "pytorch")
    assert [frameworks.get(n) for n in frameworks.NAMES] == [NONE, TENSORFLOW, PYTORCH]
    assert all(frameworks.get(n).name == n for n in frameworks.NAMES)
    with pytest.raises(KeyError, match="no framework 'mxnet'"):
        frameworks.get("mxnet")


def test_roles_each_framework_gives_meaning_to():
    assert TENSORFLOW.roles == ("chief", "worker", "ps", "evaluator")
    assert PYTORCH.roles == NONE.roles == ("worker",)
    assert frameworks.KNOWN_ROLES == ("chief", "worker", "ps", "evaluator")  # the CLI's order


def test_tf_config_lists_every_server_but_not_the_evaluator():
    cfg = json.loads(TENSORFLOW.task_env("worker", 1, VIEW, 1)["TF_CONFIG"])
    assert cfg == {"cluster": {"chief": ["h0:1000"], "worker": ["h1:1001", "h2:1002"], "ps": ["h3:1003"]},
                   "task": {"type": "worker", "index": 1}}


def test_the_evaluator_knows_itself_but_is_not_in_the_cluster():
    cfg = json.loads(TENSORFLOW.task_env("evaluator", 0, VIEW, 1)["TF_CONFIG"])
    assert cfg["task"] == {"type": "evaluator", "index": 0}
    assert "evaluator" not in cfg["cluster"]


def test_pytorch_env_is_what_torchrun_sets_for_one_process_per_container():
    env = PYTORCH.task_env("worker", 1, {"worker": ["a:29500", "b:29501"]}, nproc=1)
    assert env == {"MASTER_ADDR": "a", "MASTER_PORT": "29500", "RANK": "1", "WORLD_SIZE": "2",
                   "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1", "GROUP_RANK": "1", "NODE_RANK": "1",
                   "ROLE_RANK": "1", "ROLE_WORLD_SIZE": "2"}


def test_several_processes_go_through_torchrun_with_a_static_rendezvous_on_rank_0():
    view = {"worker": ["a:29500", "b:29501"]}
    env = PYTORCH.task_env("worker", 0, view, nproc=4)
    assert "RANK" not in env and env["NODE_RANK"] == "0"  # torchrun sets per-process ranks
    cmd = PYTORCH.wrap_command(["python3", "train.py", "--lr", "1"], 1, view, 4, "app_7")
    assert cmd == ["python", "-m", "torch.distributed.run", "--nnodes=2", "--nproc-per-node=4", "--node-rank=1",
                   "--rdzv-backend=static", "--master-addr=a", "--master-port=29500", "--rdzv-id=app_7", "train.py", "--lr", "1"]
    assert PYTORCH.wrap_command(["./run.sh"], 0, view, 2, "x")[-2:] == ["--no-python", "./run.sh"]
    assert PYTORCH.wrap_command(["python", "-m", "pkg.train"], 0, view, 2, "x")[-2:] == ["-m", "pkg.train"]
    assert PYTORCH.wrap_command(["python", "t.py"], 0, view, 1, "x") == ["python", "t.py"]


def test_only_pytorch_wraps_the_command_or_sets_torchrun_variables():
    for fw in (NONE, TENSORFLOW):
        assert fw.wrap_command(["python", "t.py"], 0, VIEW, 1, "x") == ["python", "t.py"]
    assert NONE.task_env("worker", 0, VIEW, 1) == {}


def test_every_variable_a_framework_sets_is_declared_and_so_refused_in_env():
    for fw, role, nproc in ((TENSORFLOW, "worker", 1), (PYTORCH, "worker", 1), (PYTORCH, "worker", 2)):
        assert set(fw.task_env(role, 0, VIEW, nproc)) <= set(fw.env_names) <= set(frameworks.ENV_NAMES)
    with pytest.raises(SpecError, match="env: MASTER_PORT is set by tfyarn"):
        JobSpec(name="j", command=("x",), roles={"worker": RoleSpec("worker", 1)},
                env={"MASTER_PORT": "1"}).validate()


def test_only_tensorflow_holds_the_reserved_port_while_the_command_runs():
    """Its gRPC server binds the port with SO_REUSEPORT; torch's store and plain commands need it free."""
    assert not TENSORFLOW.releases_port_before_command
    assert PYTORCH.releases_port_before_command and NONE.releases_port_before_command


def test_only_pytorch_runs_several_processes_per_container():
    assert PYTORCH.processes(RoleSpec("worker", 2, gpus=4)) == 4
    assert PYTORCH.processes(RoleSpec("worker", 2)) == 1
    assert PYTORCH.processes(RoleSpec("worker", 2, gpus=4, nproc_per_node=2)) == 2
    assert TENSORFLOW.processes(RoleSpec("worker", 2, gpus=4)) == NONE.processes(RoleSpec("worker", 2, gpus=4)) == 1


def test_default_commands():
    ps = job("tensorflow", chief=1, worker=2, ps=1, evaluator=1)
    assert TENSORFLOW.default_command(ps, "ps") == TENSORFLOW.default_command(ps, "worker") == SERVER_COMMAND
    assert SERVER_COMMAND == ("python", "-m", "appmaster.executor.tf_server")
    assert TENSORFLOW.default_command(ps, "chief") == TENSORFLOW.default_command(ps, "evaluator") == ()
    assert TENSORFLOW.default_command(job("tensorflow", worker=2), "worker") == ()  # no ps: the user's command
    assert PYTORCH.default_command(job("pytorch", worker=2), "worker") == ()
    assert NONE.default_command(job("none", worker=2), "worker") == ()


def test_which_roles_decide_the_job():
    ps = job("tensorflow", chief=1, worker=2, ps=1, evaluator=1)
    assert TENSORFLOW.required_roles(ps) == {"chief"} and TENSORFLOW.tolerated_roles(ps) == {"evaluator"}
    mwms = job("tensorflow", chief=1, worker=2, evaluator=1)
    assert TENSORFLOW.required_roles(mwms) == {"chief", "worker"}
    strict = JobSpec(name="j", command=("x",), framework="tensorflow", evaluator_may_fail=False,
                     roles={"worker": RoleSpec("worker", 1), "evaluator": RoleSpec("evaluator", 1)})
    assert TENSORFLOW.tolerated_roles(strict) == frozenset()
    assert PYTORCH.required_roles(job("pytorch", worker=2, ps=0)) == {"worker"}
    assert NONE.required_roles(job("none", worker=1, trainer=2)) == {"worker", "trainer"}
    assert NONE.tolerated_roles(job("none", worker=1)) == PYTORCH.tolerated_roles(job("pytorch", worker=1)) == set()


@pytest.mark.parametrize("fw,roles,msg", [
    (NONE, dict(chief=1), "roles.chief.instances: the chief role needs --framework tensorflow"),
    (NONE, dict(worker=1, ps=1), "roles.ps.instances: the ps role needs --framework tensorflow"),
    (NONE, dict(worker=1, evaluator=1), "roles.evaluator.instances: the evaluator role needs --framework tensorflow"),
    (NONE, dict(worker=RoleSpec("worker", 1, nproc_per_node=2)),
     "roles.worker.nproc_per_node: only pytorch workers run several processes"),
    (NONE, dict(worker=0), "roles.worker.instances: must be at least 1, got 0"),
    (TENSORFLOW, dict(worker=1, trainer=1), "roles.trainer: tensorflow roles are chief, worker, ps, evaluator"),
    (TENSORFLOW, dict(worker=RoleSpec("worker", 1, nproc_per_node=2)),
     "roles.worker.nproc_per_node: only pytorch workers run several processes"),
    (TENSORFLOW, dict(chief=2), "roles.chief.instances: a tensorflow job has at most one chief, got 2"),
    (TENSORFLOW, dict(worker=1, evaluator=2), "roles.evaluator.instances: a tensorflow job has at most one evaluator"),
    (TENSORFLOW, dict(worker=0, evaluator=1), "a tensorflow job needs a chief or at least one worker"),
    (TENSORFLOW, dict(worker=1, ps=1), "roles.chief.instances: a ParameterServerStrategy job .* needs a chief"),
    (PYTORCH, dict(worker=1, ps=1), "roles.ps.instances: pytorch jobs have no parameter servers"),
    (PYTORCH, dict(worker=1, evaluator=1), "roles.evaluator.instances: pytorch jobs have no evaluator"),
    (PYTORCH, dict(worker=1, chief=0), "roles.chief: pytorch jobs have only the worker role"),
    (PYTORCH, dict(worker=0), "roles.worker.instances: must be at least 1, got 0"),
])
def test_each_frameworks_rules_name_the_role(fw, roles, msg):
    j = job(fw.name, **roles)
    with pytest.raises(SpecError, match=msg):
        fw.validate(j)
    with pytest.raises(SpecError, match=msg):  # and the spec applies them
        j.validate()


@pytest.mark.parametrize("fw,roles", [
    (NONE, dict(worker=2, trainer=1, chief=0, ps=0, evaluator=0)),  # the CLI's unused roles have 0 tasks
    (NONE, dict(trainer=1)),
    (TENSORFLOW, dict(chief=1, worker=2, ps=1, evaluator=1)),
    (TENSORFLOW, dict(chief=1, worker=0)),
    (PYTORCH, dict(worker=2, ps=0, evaluator=0)),
    (PYTORCH, dict(worker=RoleSpec("worker", 2, nproc_per_node=4))),
])
def test_valid_roles_pass_each_frameworks_rules(fw, roles):
    j = job(fw.name, **roles)
    fw.validate(j)
    assert j.validate() is j


def test_threads_follow_the_containers_vcores_split_among_its_processes():
    assert thread_env({"SKEIN_RESOURCE_VCORES": "8"}, 1) == {"OMP_NUM_THREADS": "8"}
    assert thread_env({"SKEIN_RESOURCE_VCORES": "8"}, 2) == {"OMP_NUM_THREADS": "4"}
    assert thread_env({"SKEIN_RESOURCE_VCORES": "1"}, 4) == {"OMP_NUM_THREADS": "1"}  # never 0
    assert thread_env({"SKEIN_RESOURCE_VCORES": "8", "OMP_NUM_THREADS": "3"}, 1) == {}  # the user's wins
    assert thread_env({}, 1) == {}  # not in a skein container: nothing to go by


def test_the_frameworks_import_nothing_heavy_and_nothing_of_the_appmaster():
    import subprocess
    import sys

    code = ("import sys, tfyarn.frameworks; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'torch', 'appmaster', 'skein')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
