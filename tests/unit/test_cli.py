"""The CLI's parsing and its bad-input catalogue: one line, a defined exit code, nothing submitted."""
import os
import stat
import time

import pytest
from click.testing import CliRunner

from tfyarn.cli.main import cli


def run(*args, env=None):
    # The group's main() turns errors into exit codes, as the real command does.
    runner = CliRunner()
    return runner.invoke(cli, list(args), env=env, prog_name="tfyarn", standalone_mode=True)


@pytest.fixture
def no_cluster(tmp_path, monkeypatch):
    """A HADOOP_CONF_DIR whose ResourceManager port is closed, and a `yarn` on PATH."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "yarn-site.xml").write_text(
        "<configuration><property><name>yarn.resourcemanager.address</name>"
        "<value>127.0.0.1:1</value></property></configuration>")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    yarn = bindir / "yarn"
    yarn.write_text("#!/bin/sh\nexit 1\n")
    yarn.chmod(yarn.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("HADOOP_CONF_DIR", str(conf))
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    return conf


BAD_INPUT = [
    # (args, exit code, text the single error line must contain)
    (["submit"], 2, "no command given"),
    (["submit", "--num-workers", "0", "--", "python", "x.py"], 2, "--num-workers"),
    (["submit", "--num-workers", "-1", "--", "python", "x.py"], 2, "'-1' is not a count (e.g. 4) or MIN:MAX"),
    (["submit", "--num-workers", "3:2", "--", "python", "x.py"], 2, "MIN:MAX with 1 <= MIN <= MAX"),
    (["submit", "--num-workers", "2:3", "--", "python", "x.py"], 2, "only pytorch workers are elastic"),
    (["submit", "--worker-memory", "banana", "--", "python", "x.py"], 2, "'banana' is not a memory size"),
    (["submit", "--worker-gpus", "-1", "--", "python"], 2, "--worker-gpus"),
    (["submit", "--frobnicate", "--", "python"], 2, "No such option '--frobnicate'"),
    (["submit", "--env", "NOEQUALS", "--", "python"], 2, "'NOEQUALS' is not NAME=VALUE"),
    (["submit", "--env", "TFYARN_ROLE=x", "--", "python"], 2, "--env: TFYARN_ROLE is set by tfyarn"),
    (["nosuchcommand"], 2, "No such command 'nosuchcommand'"),
    (["status", "not-an-app"], 2, "is not a YARN application id"),
    (["cluster", "up", "--memory", "lots"], 2, "'lots' is not a memory size"),
    # distributed-training rules, named by the flag that broke them
    (["submit", "--framework", "pytorch", "--num-ps", "1", "--", "python", "t.py"], 2,
     "--num-ps: pytorch jobs have no parameter servers"),
    (["submit", "--framework", "pytorch", "--evaluator", "--", "python", "t.py"], 2,
     "--evaluator: pytorch jobs have no evaluator"),
    (["submit", "--framework", "tensorflow", "--chief", "--chief", "--", "python", "t.py"], 2,
     "--chief: a tensorflow job has at most one chief, got 2"),
    (["submit", "--framework", "tensorflow", "--num-ps", "1", "--", "python", "t.py"], 2,
     "--chief"),
    (["submit", "--num-ps", "1", "--", "python", "t.py"], 2, "--num-ps: the ps role needs --framework tensorflow"),
    (["submit", "--framework", "tensorflow", "--num-workers", "0", "--", "python", "t.py"], 2,
     "needs a chief or at least one worker"),
    (["submit", "--framework", "mxnet", "--", "python"], 2, "'mxnet' is not one of"),
    (["submit", "--nproc-per-node", "2", "--", "python"], 2,
     "--nproc-per-node: only pytorch workers run several processes"),
    (["submit", "--set", "roles.worker.instances=two", "--", "python"], 2,
     "roles.worker.instances (--num-workers): 'two' is not a whole number"),
    (["submit", "--set", "wokers=3", "--", "python"], 2, "unknown key(s) wokers"),
    (["submit", "--set", "queue=[a, b]", "--", "python"], 2, "queue (--queue): expected a string"),
    # staging
    (["submit", "--input", "ftp://host/data", "--", "python"], 2, "--input: 'ftp://host/data' has scheme 'ftp'"),
    (["submit", "--input", "hdfs:data", "--", "python"], 2, "--input: 'hdfs:data' is not a URI"),
    (["submit", "--output", "model", "--", "python"], 2, "--output: 'model' is not LOCAL_DIR:URI"),
    (["submit", "--output", "/abs/model:hdfs:///m", "--", "python"], 2, "must be a relative path"),
    (["submit", "--input-mode", "stream", "--", "python"], 2, "'stream' is not one of"),
    (["submit", "--save-every", "10", "--", "python"], 2, "--save-every: snapshots need an output"),
    (["submit", "--python-env", "conda", "--", "python"], 2, "--python-env: 'conda' is not one of"),
    # reliability: restart policies, gang timeouts, ACLs
    (["submit", "--worker-restart", "sometimes", "--", "python"], 2, "'sometimes' is not one of"),
    (["submit", "--worker-max-restarts", "-1", "--", "python"], 2, "--worker-max-restarts"),
    (["submit", "--worker-permanent-exit-codes", "0,300", "--", "python"], 2, "exit codes 1-255"),
    (["submit", "--set", "roles.worker.restart_policy=always", "--", "python"], 2,
     "roles.worker.restart_policy (--worker-restart): 'always' is not one of never, on-failure, all"),
    (["submit", "--set", "roles.worker.permanent_exit_codes=[x]", "--", "python"], 2,
     "(--worker-permanent-exit-codes): ['x'] are not exit codes"),
    (["submit", "--allocation-timeout", "0", "--", "python"], 2, "--allocation-timeout"),
    (["submit", "--set", "registration_timeout_s=soon", "--", "python"], 2,
     "registration_timeout_s (--registration-timeout): 'soon' is not a whole number"),
    (["submit", "--max-runtime", "soon", "--", "python"], 2,
     "Invalid value for '--max-runtime': 'soon' is not a duration; use e.g. 90s, 30m, 2h or 1h30m"),
    (["submit", "--set", "max_runtime_s=-1", "--", "python"], 2,
     "max_runtime_s (--max-runtime): must be at least 0, got -1"),
    (["submit", "--worker-progress-timeout", "5 min", "--", "python"], 2,
     "Invalid value for '--worker-progress-timeout': '5 min' is not a duration"),
    (["submit", "--set", "roles.ps.progress_timeout_s=-3", "--", "python"], 2,
     "roles.ps.progress_timeout_s (--ps-progress-timeout): must be at least 0, got -3"),
    (["submit", "--view-acl", "bad user", "--", "python"], 2, "--view-acl: 'bad user' is not a user name"),
    (["submit", "--set", "modify_acls=bob", "--", "python"], 2, "modify_acls (--modify-acl): expected a list"),
    (["--principal", "ann@EXAMPLE.COM", "list"], 2, "--principal and --keytab go together"),
    (["--principal", "ann@EXAMPLE.COM", "--keytab", "/no/such.keytab", "list"], 2, "does not exist"),
    (["submit", "--tensorboard", "--set", "tensorboard=maybe", "--", "python"], 2,
     "tensorboard (--tensorboard): expected true or false, got 'maybe'"),
]


@pytest.mark.parametrize("args,code,text", BAD_INPUT, ids=[" ".join(a[0]) for a in BAD_INPUT])
def test_bad_input_gets_one_clear_line(args, code, text, no_cluster):
    res = run(*args)
    assert res.exit_code == code, res.output
    lines = [l for l in res.output.splitlines() if l.strip()]
    assert len(lines) == 1, res.output
    assert lines[0].startswith("Error: ") and text in lines[0], res.output


def test_unreachable_resourcemanager_is_named_fast(no_cluster):
    t0 = time.monotonic()
    res = run("submit", "--", "python", "-c", "pass")
    assert time.monotonic() - t0 < 30
    assert res.exit_code == 3, res.output
    assert "the ResourceManager at 127.0.0.1:1 is unreachable" in res.output
    assert "tfyarn cluster up" in res.output
    assert "Exception" not in res.output


def test_no_configuration_at_all(tmp_path, monkeypatch):
    monkeypatch.delenv("HADOOP_CONF_DIR", raising=False)
    monkeypatch.setenv("TFYARN_CLUSTER_DIR", str(tmp_path / "nothing"))
    res = run("submit", "--", "python", "-c", "pass")
    assert res.exit_code == 3
    assert "no Hadoop cluster configured" in res.output


def test_dry_run_prints_the_plan_and_needs_no_cluster(no_cluster):
    res = run("submit", "--dry-run=yarn", "--num-workers", "3", "--worker-memory", "1g", "--queue", "research",
              "--", "python", "train.py", "--lr", "0.1")
    assert res.exit_code == 0, res.output
    assert "queue: research" in res.output
    assert "instances: 3" in res.output and "memory: 1024" in res.output
    assert "# worker: 3 x (1024 MiB, 1 vcore(s), 0 GPU(s)) runs: python train.py --lr 0.1" in res.output


@pytest.mark.parametrize("yaml_text,text", [
    ("name: x\nroles: {worker: {instances: 2, gpu: 1}}\ncommand: [python, t.py]\n",
     "roles.worker: unknown key(s) gpu"),
    ("name: x\nroles: {worker: {instances: two}}\ncommand: [python, t.py]\n",
     "roles.worker.instances (--num-workers): 'two' is not a whole number"),
    ("name: x\nframework: tensorflow\nroles: {chief: {instances: 1}, ps: {instances: 1}}\n"
     "command: python t.py\n", "command: give the command as a list of arguments"),
    ("name: [x\n", "not valid YAML"),
    ("- just\n- a list\n", "expected a mapping of job-spec keys"),
])
def test_bad_yaml_job_files_name_the_field(tmp_path, no_cluster, yaml_text, text):
    conf = tmp_path / "job.yaml"
    conf.write_text(yaml_text)
    res = run("submit", "--conf", str(conf), "--dry-run=yarn")
    assert res.exit_code == 2, res.output
    lines = [l for l in res.output.splitlines() if l.strip()]
    assert len(lines) == 1 and text in lines[0], res.output


def test_yaml_file_flags_and_set_layer_in_that_order(tmp_path, no_cluster):
    conf = tmp_path / "job.yaml"
    conf.write_text("name: layered\nframework: pytorch\nqueue: research\ncommand: [python, t.py]\n"
                    "roles: {worker: {instances: 4, memory_mb: 1g}}\n")
    res = run("submit", "--conf", str(conf), "--num-workers", "2", "--set", "roles.worker.vcores=3", "--dry-run=yarn")
    assert res.exit_code == 0, res.output
    assert "# worker: 2 x (1024 MiB, 3 vcore(s), 0 GPU(s)) runs: python t.py" in res.output
    assert "queue: research" in res.output and "name: layered" in res.output


@pytest.mark.parametrize("args", [[], ["submit"], ["cluster"], ["cluster", "up"], ["status"], ["logs"], ["kill"], ["list"]])
def test_help_teaches(args):
    res = run(*args, "--help")
    assert res.exit_code == 0
    assert "Usage: tfyarn" in res.output


def test_submit_help_has_examples_and_exit_codes():
    out = run("submit", "--help").output
    assert "tfyarn submit --framework tensorflow --chief --num-workers 2 --num-ps 1" in out
    assert "Exit codes" in out
