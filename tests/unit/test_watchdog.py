"""--progress-timeout: the spec's rules, the report heartbeats, and the watchdog on real child processes."""
from __future__ import annotations

import json
import sys
import time
from types import SimpleNamespace

import pytest

from appmaster.executor import process
from appmaster.executor.monitor import parse_heartbeat
from appmaster.executor.watchdog import Watchdog
from tfyarn import protocol, report, taskenv
from tfyarn.errors import SpecError
from tfyarn.spec import JobSpec, RoleSpec


def tf_job(**job: object) -> JobSpec:
    roles = {r: RoleSpec(name=r, instances=1) for r in ("chief", "worker", "ps", "evaluator")}
    return JobSpec(name="t", command=("python", "x.py"), framework="tensorflow", roles=roles, **job).validate()


def test_the_jobs_timeout_covers_every_role_but_ps_and_evaluator():
    job = tf_job(progress_timeout_s=60)
    assert {r: job.progress_timeout_for(r) for r in job.roles} == {"chief": 60, "worker": 60, "ps": 0, "evaluator": 0}


def test_a_roles_own_timeout_wins_and_reaches_only_its_executor():
    data = tf_job(progress_timeout_s=60).to_dict()
    data["roles"]["evaluator"]["progress_timeout_s"] = "1h"
    data["roles"]["worker"]["progress_timeout_s"] = "90s"
    job = JobSpec.from_dict(data)
    assert (job.progress_timeout_for("worker"), job.progress_timeout_for("evaluator")) == (90, 3600)
    envs = {r: taskenv.task_env(job, r, 0, "application_1_0001") for r in job.roles}
    assert {r: e.get(protocol.ENV_PROGRESS_TIMEOUT) for r, e in envs.items()} == {
        "chief": "60", "worker": "90", "ps": None, "evaluator": "3600"}


@pytest.mark.parametrize("bad", [-1, "ten minutes", "5x", True])
def test_a_bad_timeout_is_refused_naming_the_key(bad):
    with pytest.raises(SpecError, match="progress_timeout_s"):
        JobSpec.from_dict({**tf_job().to_dict(), "progress_timeout_s": bad})


def test_heartbeats_are_written_at_most_once_a_second(tmp_path, monkeypatch):
    events = tmp_path / "events"
    monkeypatch.setenv(protocol.ENV_EVENTS, str(events))
    monkeypatch.setattr(report, "_last_heartbeat", 0.0)
    for step in range(1000):
        report.progress(step, loss=1.0 / (step + 1))
    report.metric("accuracy", float("nan"))  # not a number: dropped, the heartbeat still counts
    lines = [json.loads(x) for x in events.read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["step"] == 0 and lines[0]["metrics"] == {"loss": 1.0}
    assert parse_heartbeat(events.read_text().splitlines()[0]) == lines[0]
    time.sleep(report.HEARTBEAT_EVERY_S)
    report.metric("accuracy", 0.5, step=1000)
    last = json.loads(events.read_text().splitlines()[-1])
    assert last["step"] == 1000 and last["metrics"] == {"loss": 1.0 / 1000, "accuracy": 0.5}


def test_outside_a_task_reports_do_nothing(monkeypatch):
    monkeypatch.delenv(protocol.ENV_EVENTS, raising=False)
    report.progress(1)
    report.metric("loss", 1.0)
    report.first_step()


def test_milestones_are_not_heartbeats():
    assert parse_heartbeat(json.dumps({"stage": "first_step", "time": time.time()})) is None
    assert parse_heartbeat("not json") is None and parse_heartbeat('{"progress": 1}') is None


def watched(script: str, timeout_s: int, heartbeats: bool = False) -> tuple[process.Outcome, float]:
    """Run a Python ``script`` under a watchdog; (its outcome, seconds it ran)."""
    reports = SimpleNamespace(last_report=0.0, last_report_what="", heartbeats=heartbeats)
    stop = process.StopSignals()
    dog = Watchdog("worker:1", timeout_s, reports, stop)
    if heartbeats:  # one arrived after the command's start
        reports.last_report, reports.last_report_what = time.monotonic(), "tfyarn.report.progress() at step 3"
    t0 = time.monotonic()
    dog.start()
    outcome = dog.finish(process.run([sys.executable, "-c", script], {}, stop, on_output=dog.saw_output))
    return outcome, time.monotonic() - t0


def test_a_command_that_stalls_is_stopped_with_a_line_naming_it_and_its_last_progress():
    outcome, took = watched("import sys, time; print('step 1', flush=True); sys.stderr.write('warming\\n'); "
                            "time.sleep(120)", 2)
    assert outcome.exit_code == protocol.EXIT_NO_PROGRESS
    first = outcome.stderr_tail.splitlines()[0]
    assert first.startswith("tfyarn: worker:1 made no progress for 2 s (--progress-timeout): its last progress "
                            "was output on its stdout/stderr, at "), first
    assert "warming" in outcome.stderr_tail
    assert took < 15, took  # stopped, not left to sleep


def test_a_command_that_keeps_printing_runs_to_its_end():
    outcome, took = watched("import time\nfor i in range(12): print(i, flush=True); time.sleep(0.3)", 2)
    assert (outcome.exit_code, took > 3) == (0, True)


def test_after_a_heartbeat_output_alone_is_no_progress():
    """A hung job whose threads still log is caught once the script sends heartbeats."""
    outcome, _ = watched("import time\nwhile True: print('NCCL WARN still waiting', flush=True); time.sleep(0.2)",
                         2, heartbeats=True)
    assert outcome.exit_code == protocol.EXIT_NO_PROGRESS
    assert "its last progress was tfyarn.report.progress() at step 3" in outcome.stderr_tail


def test_stdout_still_reaches_the_log_when_watched(capfd):
    outcome, _ = watched("print('to the log')", 30)
    assert outcome.exit_code == 0 and "to the log" in capfd.readouterr().out
