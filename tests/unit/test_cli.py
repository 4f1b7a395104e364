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
    (["submit", "--num-workers", "-1", "--", "python", "x.py"], 2, "-1 is not in the range x>=0"),
    (["submit", "--worker-memory", "banana", "--", "python", "x.py"], 2, "'banana' is not a memory size"),
    (["submit", "--worker-gpus", "-1", "--", "python"], 2, "--worker-gpus"),
    (["submit", "--frobnicate", "--", "python"], 2, "No such option '--frobnicate'"),
    (["submit", "--env", "NOEQUALS", "--", "python"], 2, "'NOEQUALS' is not NAME=VALUE"),
    (["submit", "--env", 'A=say "hi"', "--", "python"], 2, "double quote"),
    (["nosuchcommand"], 2, "No such command 'nosuchcommand'"),
    (["status", "not-an-app"], 2, "is not a YARN application id"),
    (["cluster", "up", "--memory", "lots"], 2, "'lots' is not a memory size"),
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
    res = run("submit", "--dry-run", "--num-workers", "3", "--worker-memory", "1g", "--queue", "research",
              "--", "python", "train.py", "--lr", "0.1")
    assert res.exit_code == 0, res.output
    assert "queue: research" in res.output
    assert "instances: 0" in res.output and "memory: 1024" in res.output
    assert "# command: python train.py --lr 0.1" in res.output


@pytest.mark.parametrize("args", [[], ["submit"], ["cluster"], ["cluster", "up"], ["status"], ["logs"], ["kill"]])
def test_help_teaches(args):
    res = run(*args, "--help")
    assert res.exit_code == 0
    assert "Usage: tfyarn" in res.output


def test_submit_help_has_examples_and_exit_codes():
    out = run("submit", "--help").output
    assert "tfyarn submit --num-workers 2 --wait -- python" in out
    assert "Exit codes" in out
