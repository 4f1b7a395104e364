"""Layers under the flags: the per-user defaults file and TFYARN_SUBMIT_* variables; tables sized to content."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tfyarn.cli.jobfile import merged
from tfyarn.cli.table import table


def dry_run(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    import os

    full = {**os.environ, "HADOOP_CONF_DIR": "/nonexistent", **env}
    return subprocess.run([sys.executable, "-m", "tfyarn", "submit", "--dry-run=yarn", "--python-env", "local", *args,
                           "--", "python", "-c", "1"], capture_output=True, text=True, env=full, cwd=cwd, timeout=60)


def test_defaults_file_then_job_file_then_variables_then_flags(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"  # not tmp_path/tfyarn: run from tmp_path, that dir would shadow the package
    (cfg / "tfyarn").mkdir(parents=True)
    (cfg / "tfyarn" / "defaults.yaml").write_text(
        "queue: batch\ntags: [from-defaults]\nroles:\n  worker:\n    memory_mb: 1g\n    vcores: 2\n")
    (tmp_path / "job.yaml").write_text("roles:\n  worker:\n    vcores: 3\n")
    got = dry_run("--conf", str(tmp_path / "job.yaml"), env={"XDG_CONFIG_HOME": str(cfg)}, cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert "# worker: 1 x (1024 MiB, 3 vcore(s), 0 GPU(s))" in got.stdout  # memory from defaults, vcores from the job
    assert "queue: batch" in got.stdout and "from-defaults" in got.stdout
    got = dry_run("--conf", str(tmp_path / "job.yaml"), env={"XDG_CONFIG_HOME": str(cfg),
                                                              "TFYARN_SUBMIT_QUEUE": "research"}, cwd=tmp_path)
    assert "queue: research" in got.stdout
    got = dry_run("--queue", "flags", env={"XDG_CONFIG_HOME": str(cfg), "TFYARN_SUBMIT_QUEUE": "research"},
                  cwd=tmp_path)
    assert "queue: flags" in got.stdout


def test_a_bad_variable_is_named_as_such(tmp_path: Path) -> None:
    got = dry_run(env={"TFYARN_SUBMIT_NUM_WORKERS": "0"}, cwd=tmp_path)
    assert got.returncode == 2
    assert got.stderr.strip() == "Error: TFYARN_SUBMIT_NUM_WORKERS (--num-workers): must be at least 1, got 0"


def test_a_defaults_file_named_but_missing_or_broken_is_an_error(tmp_path: Path) -> None:
    got = dry_run(env={"TFYARN_DEFAULTS": str(tmp_path / "none.yaml")}, cwd=tmp_path)
    assert (got.returncode, got.stderr.strip()) == (2, f"Error: TFYARN_DEFAULTS: '{tmp_path / 'none.yaml'}' is not a "
                                                        "regular file; point it at a YAML file of job-spec keys "
                                                        "(conf/job.yaml), or unset it")
    (tmp_path / "bad.yaml").write_text("- a list\n")
    got = dry_run(env={"TFYARN_DEFAULTS": str(tmp_path / "bad.yaml")}, cwd=tmp_path)
    assert (got.returncode, got.stderr.strip()) == (2, f"Error: defaults file {tmp_path / 'bad.yaml'}: expected a "
                                                        "mapping of job-spec keys, got list")


def test_merged_merges_mappings_and_replaces_the_rest() -> None:
    base = {"roles": {"worker": {"memory_mb": 1024, "vcores": 2}}, "tags": ["a"], "queue": "q"}
    over = {"roles": {"worker": {"vcores": 4}, "ps": {"instances": 1}}, "tags": ["b"]}
    assert merged(base, over) == {"roles": {"worker": {"memory_mb": 1024, "vcores": 4}, "ps": {"instances": 1}},
                                  "tags": ["b"], "queue": "q"}
    assert base["roles"]["worker"]["vcores"] == 2  # not changed in place


def test_columns_fit_the_longest_cell() -> None:
    lines = table(("TASK", "HOST", "STATE"), [["worker:0", "a-very-long-host-name.example.com", "RUNNING"],
                                              ["ps:0", "h", "FAILED"]])
    assert lines == ["TASK      HOST                               STATE",
                     "worker:0  a-very-long-host-name.example.com  RUNNING",
                     "ps:0      h                                  FAILED"]
    with pytest.raises(ValueError):
        table(("A", "B"), [["only one"]])


def test_shell_completion_offers_commands_and_flags() -> None:
    import os

    def complete(words: str) -> list[str]:
        env = {**os.environ, "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1),
               "_TFYARN_COMPLETE": "bash_complete"}
        out = subprocess.run([sys.executable, "-m", "tfyarn"], env=env, capture_output=True, text=True, timeout=60)
        return out.stdout.split()

    assert "plain,submit" in complete("tfyarn su")
    assert "plain,--num-workers" in complete("tfyarn submit --num-w")
