"""The public Python API (tfyarn.JobSpec, RoleSpec, Client, load_job) and the scriptable CLI (--json, tfyarn wait).

The CLI runs against a fake tfyarn.client.Client; its follow loop is the real Client.wait.
"""
from __future__ import annotations

import configparser
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import tfyarn
import tfyarn.client
from tfyarn.cli.main import cli
from tfyarn.errors import SpecError
from tfyarn.status import JobReport, JobState, TaskState
from tfyarn.wire import JobStatus, StatusDoc, TaskStatus

ROOT = Path(__file__).resolve().parents[2]
APP = "application_1_0001"
HEAVY = ("skein", "pyarrow", "click")


# --- import tfyarn stays light ------------------------------------------------------------------
def imported_after(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", f"import sys\n{code}\n"
                          f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    return json.loads(out.strip().replace("'", '"'))


def test_import_tfyarn_imports_no_skein_pyarrow_or_click():
    assert imported_after("import tfyarn") == []


def test_the_spec_and_load_job_need_no_skein_pyarrow_or_click():
    assert imported_after("import tfyarn\ntfyarn.JobSpec, tfyarn.RoleSpec, tfyarn.load_job") == []


def test_the_public_names_resolve_to_the_real_ones():
    import tfyarn.jobload
    import tfyarn.spec

    assert tfyarn.JobSpec is tfyarn.spec.JobSpec and tfyarn.RoleSpec is tfyarn.spec.RoleSpec
    assert tfyarn.Client is tfyarn.client.Client and tfyarn.load_job is tfyarn.jobload.load_job
    assert set(tfyarn.__all__) == {"Client", "JobSpec", "RoleSpec", "load_job", "__version__"}
    assert set(tfyarn.__all__) <= set(dir(tfyarn))
    with pytest.raises(AttributeError, match="no attribute 'Clinet'"):
        tfyarn.Clinet  # noqa: B018
    from tfyarn import protocol  # submodules still import as before

    assert protocol.__name__ == "tfyarn.protocol"


def test_py_typed_ships_with_the_package():
    assert (ROOT / "tfyarn" / "py.typed").is_file()
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert {"py.typed", "job.yaml", "job.schema.json"} <= set(cfg["options.package_data"]["tfyarn"].split())  # make wheel-check installs it


# --- a fake cluster for the CLI ------------------------------------------------------------------
def report(state: JobState, diagnostics: str = "") -> JobReport:
    return JobReport(app_id=APP, name="demo", state=state, yarn_state=state.value, final_status="UNDEFINED",
                     diagnostics=diagnostics, tracking_url="http://rm:8088/proxy/application_1_0001/",
                     queue="default", user="ann", start_time_ms=1, finish_time_ms=0)


FINAL_DOC = StatusDoc(app_id=APP, state="SUCCEEDED", tasks=(
    TaskStatus(name="worker:0", role="worker", index=0, state=TaskState.SUCCEEDED, exit_code=0),))


class FakeClient:
    """tfyarn.client.Client as the CLI uses it: the job goes through ``states``, one per report."""

    states: list[JobState] = [JobState.ACCEPTED, JobState.RUNNING, JobState.SUCCEEDED]
    interrupt_at: int | None = None  # the report call that Ctrl-C lands in
    doc: StatusDoc | None = FINAL_DOC
    submitted: list[Any] = []
    killed: list[str] = []

    def __init__(self) -> None:
        self.polls = 0

    def __enter__(self) -> FakeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def submit(self, spec: Any, progress: Any = None) -> str:
        self.submitted.append(spec)
        return APP

    def report(self, app_id: str) -> JobReport:
        if self.polls == self.interrupt_at:
            raise KeyboardInterrupt
        state = self.states[min(self.polls, len(self.states) - 1)]
        self.polls += 1
        return report(state, "all 1 worker task(s) succeeded" if state is JobState.SUCCEEDED else "")

    def live_doc(self, rep: JobReport) -> StatusDoc | None:
        return None

    def status_doc(self, app_id: str) -> StatusDoc | None:
        return self.doc

    def kill(self, app_id: str) -> None:
        self.killed.append(app_id)

    wait = tfyarn.client.Client.wait  # the real loop


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(tfyarn.client, "Client", FakeClient)
    monkeypatch.setattr(FakeClient, "submitted", [])
    monkeypatch.setattr(FakeClient, "killed", [])
    monkeypatch.setattr("tfyarn.follow.time.sleep", lambda s: None)
    return FakeClient


def run(*args: str):
    return CliRunner().invoke(cli, list(args), prog_name="tfyarn")


SUBMIT = ("submit", "--num-workers", "1", "--", "python", "-c", "print(1)")


# --- tfyarn wait ---------------------------------------------------------------------------------
def test_wait_follows_to_success(fake):
    res = run("wait", APP)
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == [f"{APP} SUCCEEDED: all 1 worker task(s) succeeded",
                                       "Tracking URL: http://rm:8088/proxy/application_1_0001/"]
    assert [ln.split("] ")[1] for ln in res.stderr.splitlines()] == ["ACCEPTED", "RUNNING", "SUCCEEDED"]


@pytest.mark.parametrize("end", [JobState.FAILED, JobState.KILLED])
def test_wait_exits_4_when_the_job_did_not_succeed(fake, monkeypatch, end):
    monkeypatch.setattr(fake, "states", [JobState.RUNNING, end])
    res = run("wait", APP)
    assert res.exit_code == 4, res.output
    assert f"{APP} {end.value}" in res.stdout and f"Error: {APP} ended {end.value}" in res.stderr


def test_ctrl_c_in_wait_leaves_the_job_running_and_says_how_to_come_back(fake, monkeypatch):
    monkeypatch.setattr(fake, "interrupt_at", 1)
    res = run("wait", APP)
    assert res.exit_code == 130, res.output
    said = [ln for ln in res.stderr.splitlines() if "Interrupted" in ln]
    assert said == [f"Interrupted: {APP} keeps running; re-attach with `tfyarn wait {APP}`, "
                    f"stop it with `tfyarn kill {APP}`"]
    assert res.stdout == "" and fake.killed == []


def test_wait_json_prints_one_object_with_the_final_status(fake):
    res = run("wait", "--json", APP)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert list(out) == ["app_id", "tracking_url", "state", "diagnostics", "status"]
    assert out["app_id"] == APP and out["state"] == "SUCCEEDED" and out["tracking_url"].startswith("http://")
    assert out["status"] == JobStatus(report(JobState.SUCCEEDED, out["diagnostics"]), FINAL_DOC).to_dict()
    assert "SUCCEEDED" in res.stderr  # progress stays on stderr


def test_wait_json_says_null_when_the_ams_status_is_gone(fake, monkeypatch):
    monkeypatch.setattr(fake, "doc", None)
    out = json.loads(run("wait", "--json", APP).stdout)
    assert out["status"] is None and out["state"] == "SUCCEEDED"


def test_wait_refuses_what_is_no_application_id(fake):
    res = run("wait", "nope")
    assert res.exit_code == 2 and "is not a YARN application id" in res.stderr


def test_wait_is_listed_in_help():
    assert "wait" in run("--help").stdout


# --- submit: the human lines, --json, Ctrl-C during --wait ---------------------------------------
def test_submit_prints_what_it_printed_before(fake):
    res = run(*SUBMIT)
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == [
        f"Submitted {APP} (tfyarn-python: none, 1 task(s), queue default)",
        "Tracking URL: http://rm:8088/proxy/application_1_0001/",
        "Status page: http://rm:8088/proxy/application_1_0001/pages/tfyarn/",
        f"Next: tfyarn status {APP} | tfyarn logs {APP} | tfyarn kill {APP}",
    ]


def test_submit_wait_prints_what_it_printed_before(fake):
    res = run(SUBMIT[0], "--wait", *SUBMIT[1:])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[3:] == [f"{APP} SUCCEEDED: all 1 worker task(s) succeeded",
                                           "Tracking URL: http://rm:8088/proxy/application_1_0001/"]
    assert [ln.split("] ")[1] for ln in res.stderr.splitlines()] == ["RUNNING", "SUCCEEDED"]


def test_submit_json_prints_one_object_and_the_rest_on_stderr(fake):
    res = run(SUBMIT[0], "--json", *SUBMIT[1:])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == {"app_id": APP, "tracking_url": "http://rm:8088/proxy/application_1_0001/",
                                      "state": "ACCEPTED"}
    assert len(res.stdout.splitlines()) == 1 and f"Submitted {APP}" in res.stderr


def test_submit_json_wait_prints_the_final_state(fake, monkeypatch):
    monkeypatch.setattr(fake, "states", [JobState.ACCEPTED, JobState.RUNNING, JobState.FAILED])
    res = run(SUBMIT[0], "--json", "--wait", *SUBMIT[1:])
    assert res.exit_code == 4, res.output
    out = json.loads(res.stdout)
    assert out["state"] == "FAILED" and out["app_id"] == APP and out["status"]["tasks"][0]["name"] == "worker:0"


def test_ctrl_c_in_submit_wait_leaves_the_job_running(fake, monkeypatch):
    monkeypatch.setattr(fake, "interrupt_at", 2)
    res = run(SUBMIT[0], "--wait", *SUBMIT[1:])
    assert res.exit_code == 130, res.output
    assert f"Interrupted: {APP} keeps running; re-attach with `tfyarn wait {APP}`" in res.stderr
    assert fake.killed == []


def test_ctrl_c_right_after_submit_names_the_job_it_leaves_running(fake, monkeypatch):
    monkeypatch.setattr(fake, "interrupt_at", 0)  # the report that follows the submission
    res = run(*SUBMIT)
    assert res.exit_code == 130 and f"Interrupted: {APP} keeps running" in res.stderr, res.output


def test_submit_json_does_not_go_with_dry_run():
    res = run(SUBMIT[0], "--json", "--dry-run", *SUBMIT[1:])
    assert res.exit_code == 2 and "--json" in res.stderr


# --- load_job: the CLI's layering ----------------------------------------------------------------
JOB_YAML = textwrap.dedent("""\
    name: from-yaml
    framework: tensorflow
    env: {A: "1", B: "2"}
    tags: [yaml-tag]
    roles:
      worker: {instances: 3, memory_mb: 1g}
    command: [python, yaml.py]
    """)


def cli_spec(fake, *args: str):
    res = run("submit", *args)
    assert res.exit_code == 0, res.output
    (spec,) = fake.submitted
    fake.submitted.clear()
    return spec


@pytest.mark.parametrize("args,flags,sets,command", [
    # the file alone
    ([], {}, {}, None),
    # flags over the file: scalars replace, env merges, lists add
    (["--num-workers", "2", "--worker-memory", "4g", "--env", "B=3", "--env", "C=4", "--tag", "t2", "--chief",
      "--queue", "research"],
     {"num_workers": 2, "worker_memory": "4g", "env": {"B": "3", "C": "4"}, "tag": "t2", "chief": True,
      "--queue": "research"}, {}, None),
    # --set over both; the command after --
    (["--num-workers", "2", "--set", "roles.worker.instances=5", "--set", "roles.worker.max_restarts=1",
      "--", "python", "cli.py"],
     {"num-workers": 2}, {"roles.worker.instances": 5, "roles.worker.max_restarts": "1"}, ["python", "cli.py"]),
    # inputs with their mode, outputs, exit codes
    (["--input", "hdfs:///data/a", "--input-mode", "shard", "--output", "model:hdfs:///m",
      "--worker-permanent-exit-codes", "2,3", "--evaluator", "--", "python t.py"],
     {"input": ["hdfs:///data/a"], "input_mode": "shard", "output": "model:hdfs:///m",
      "worker_permanent_exit_codes": [2, 3], "evaluator": 1}, ["name=renamed"], "'python t.py'"),
])
def test_load_job_builds_the_job_the_cli_builds(fake, tmp_path, args, flags, sets, command):
    conf = tmp_path / "job.yaml"
    conf.write_text(JOB_YAML)
    cli_args = ["--conf", str(conf), *args]
    if isinstance(sets, list):
        cli_args = [*cli_args[:-2], *[a for s in sets for a in ("--set", s)], *cli_args[-2:]]
    assert tfyarn.load_job(conf, flags, sets, command=command) == cli_spec(fake, *cli_args)


def test_load_job_without_a_file_is_flags_and_defaults(fake):
    spec = tfyarn.load_job(flags={"num_workers": 2}, command="python -c 'print(1)'")
    assert spec == cli_spec(fake, "--num-workers", "2", "--", "python", "-c", "print(1)")
    assert spec.name == "tfyarn-python" and spec.num_tasks == 2


def test_load_job_names_the_flag_at_fault():
    with pytest.raises(SpecError, match="^--num-workers: "):
        tfyarn.load_job(flags={"num_workers": 0}, command=["python"])
    with pytest.raises(SpecError, match="'num_wrokers' is not a submit option"):
        tfyarn.load_job(flags={"num_wrokers": 2}, command=["python"])
    with pytest.raises(SpecError, match="no command given"):
        tfyarn.load_job(flags={"num_workers": 1})
    with pytest.raises(SpecError, match="roles.worker.instances \\(--num-workers\\): 'two' is not a whole number"):
        tfyarn.load_job(sets={"roles.worker.instances": "two"}, command=["python"])
    with pytest.raises(SpecError, match="not KEY=VALUE"):
        tfyarn.load_job(sets=["roles.worker.instances"], command=["python"])


def test_load_job_reads_a_yaml_file_as_the_cli_does(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("roles: [1, 2\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        tfyarn.load_job(bad)
    with pytest.raises(SpecError, match="is not a regular file"):
        tfyarn.load_job(tmp_path / "missing.yaml")
