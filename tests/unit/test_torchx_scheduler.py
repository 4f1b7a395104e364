"""torchx AppDefs as tfyarn jobs: dist.ddp and utils.sh, as torchx's own components build them."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from torchx.components import dist, utils
from torchx.schedulers import get_scheduler_factories
from torchx.specs import AppDef, Role

from tfyarn import torchx_scheduler as tx


def test_the_yarn_scheduler_is_registered_with_torchx() -> None:
    scheduler = get_scheduler_factories()["yarn"](session_name="test")
    assert isinstance(scheduler, tx.YarnScheduler)
    assert {"queue", "node_label", "python_env", "code"} <= set(scheduler.run_opts()._opts)


def test_dist_ddp_becomes_a_pytorch_job_of_one_worker_per_node(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print(1)\n")
    app = dist.ddp("--epochs", "1", script="train.py", j="2x1", cpu=1, memMB=768)
    spec = tx.to_spec(app, {"queue": "research"}, cwd=str(tmp_path)).validate()
    assert (spec.framework, spec.queue, spec.code, spec.python_env) == ("pytorch", "research", str(tmp_path), "auto")
    worker = spec.roles["worker"]
    assert (worker.instances, worker.memory_mb, worker.vcores, worker.gpus) == (2, 768, 1, 0)
    shell, flag, script = spec.command
    assert (shell, flag) == ("bash", "-c")
    words = shlex.split(script)
    assert words[0] == "torchrun" and words[-3:] == ["train.py", "--epochs", "1"]
    # what the container's bash makes of it: rank0_env is MASTER_ADDR (replica 0's host, set by tfyarn),
    # app_id the job's id (known only there); the macro sat in single quotes in torchx's script
    echoed = subprocess.run(["bash", "-c", script.replace("torchrun", "echo", 1)], capture_output=True, text=True,
                            env={"MASTER_ADDR": "127.0.0.2", "TFYARN_APP_ID": "application_1_0002"}).stdout.split()
    assert echoed[echoed.index("--rdzv_endpoint") + 1] == "127.0.0.2:29500"
    assert echoed[echoed.index("--rdzv_id") + 1] == "application_1_0002"
    assert "torchx" in spec.tags


def test_a_plain_command_with_a_macro_goes_through_bash(tmp_path: Path) -> None:
    role = Role(name="echo", image="", entrypoint="echo", args=["replica", "${replica_id}", "of it's app ${app_id}"])
    spec = tx.to_spec(AppDef("hello", roles=[role]), {}, cwd=str(tmp_path))
    assert spec.framework == "none" and spec.code == ""
    assert spec.command == ("bash", "-c", "exec echo replica \"${TFYARN_TASK_INDEX}\" 'of it'\"'\"'s app '\"${TFYARN_APP_ID}\"")
    out = subprocess.run([*spec.command], capture_output=True, text=True,
                                       env={"TFYARN_TASK_INDEX": "1", "TFYARN_APP_ID": "application_1_0002"})
    assert out.stdout == "replica 1 of it's app application_1_0002\n"


def test_a_command_without_macros_is_kept_as_given(tmp_path: Path) -> None:
    app = utils.echo(msg="hi")
    spec = tx.to_spec(app, {}, cwd=str(tmp_path))
    assert spec.command == (app.roles[0].entrypoint, *app.roles[0].args)


def test_what_the_scheduler_cannot_run_is_refused_by_name(tmp_path: Path) -> None:
    two = AppDef("two", roles=[Role(name="a", image="", entrypoint="true"), Role(name="b", image="", entrypoint="true")])
    with pytest.raises(ValueError, match=r"apps of one role .*'two' has 2: a, b"):
        tx.to_spec(two, {}, cwd=str(tmp_path))
    retries = AppDef("r", roles=[Role(name="a", image="", entrypoint="true", max_retries=2)])
    with pytest.raises(ValueError, match="max_retries"):
        tx.to_spec(retries, {}, cwd=str(tmp_path))


def test_dryrun_prints_the_job_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    scheduler = tx.create_scheduler("test")
    info = scheduler.submit_dryrun(utils.echo(msg="hi"), {})
    assert isinstance(info.request, tx.JobSpec)
    assert "framework: none" in str(info) and "instances: 1" in str(info)


@pytest.mark.parametrize("script", ["echo ${app_id}", "echo '${app_id}'", 'echo "id=${app_id}"',
                                    "echo 'it''s' \"${replica_id}\" \\' ${app_id}"])
def test_a_macro_expands_in_the_container_whatever_quotes_it_sits_in(script: str) -> None:
    role = Role(name="a", image="", entrypoint="bash", args=["-c", script])
    command = tx.to_spec(AppDef("q", roles=[role]), {}, cwd="/").command
    got = subprocess.run(list(command), capture_output=True, text=True,
                         env={"TFYARN_APP_ID": "app_7", "TFYARN_TASK_INDEX": "3"}).stdout
    want = subprocess.run(["bash", "-c", script.replace("${app_id}", "app_7").replace("${replica_id}", "3")],
                          capture_output=True, text=True).stdout
    assert got == want and got.strip()


def test_a_variable_holding_a_macro_is_set_by_the_shell(tmp_path: Path) -> None:
    role = Role(name="a", image="", entrypoint="printenv", args=["TORCHX_JOB_ID", "PLAIN"],
                env={"TORCHX_JOB_ID": "yarn://torchx/${app_id}", "PLAIN": "as is"})
    spec = tx.to_spec(AppDef("e", roles=[role]), {}, cwd=str(tmp_path))
    assert spec.env == {"PLAIN": "as is"}
    got = subprocess.run(list(spec.command), capture_output=True, text=True,
                         env={"TFYARN_APP_ID": "application_9_0001", "PLAIN": "as is"}).stdout
    assert got == "yarn://torchx/application_9_0001\nas is\n"
