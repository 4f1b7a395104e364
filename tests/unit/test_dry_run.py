"""`submit --dry-run`: the resolved job as YAML that --conf loads back; `--dry-run=yarn`: the YARN spec."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import yaml
from click.testing import CliRunner

from tfyarn.cli.main import cli

NO_CLUSTER = {"HADOOP_CONF_DIR": "/nonexistent", "TFYARN_CLUSTER_DIR": "/nonexistent"}
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "tfyarn" / "job.schema.json").read_text())
JOB = ["--framework", "tensorflow", "--chief", "--num-workers", "3", "--num-ps", "1", "--worker-memory", "1g",
       "--python-env", "local", "--input", "hdfs:///data/x", "--output", "./model:hdfs:///models/run1",
       "--env", "A=1", "--worker-restart", "on-failure", "--", "python", "train.py", "--epochs", "2"]


def submit(*args: str) -> str:
    res = CliRunner().invoke(cli, ["submit", *args], env=NO_CLUSTER, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def test_the_job_form_loads_back_through_conf_as_the_same_job(tmp_path):
    shown = submit("--dry-run", *JOB)
    assert shown.startswith("# tfyarn job")
    body = "".join(line for line in shown.splitlines(keepends=True) if not line.startswith("#"))
    job = yaml.safe_load(body)
    assert job["roles"]["worker"]["instances"] == 3 and job["roles"]["worker"]["memory_mb"] == 1024
    assert job["command"] == ["python", "train.py", "--epochs", "2"] and job["env"] == {"A": "1"}
    jsonschema.validate(job, SCHEMA)  # a file the shipped schema accepts
    (tmp_path / "job.yaml").write_text(shown)  # the # lines are YAML comments: the output is the file
    assert submit("--conf", str(tmp_path / "job.yaml"), "--dry-run") == shown
    # and it plans into the same YARN application as the flags did
    assert submit("--conf", str(tmp_path / "job.yaml"), "--dry-run=yarn") == submit("--dry-run=yarn", *JOB)


def test_the_yarn_form_is_the_application_spec():
    spec = yaml.safe_load(submit("--dry-run=yarn", *JOB))
    assert {"master", "services"} <= set(spec) and {"chief", "worker", "ps"} <= set(spec["services"])
    assert spec["services"]["worker"]["instances"] == 3


def test_a_form_that_is_not_one_is_refused():
    res = CliRunner().invoke(cli, ["submit", "--dry-run=skein", *JOB], env=NO_CLUSTER)
    assert res.exit_code == 2 and "'skein' is not one of 'job', 'yarn'" in res.output
