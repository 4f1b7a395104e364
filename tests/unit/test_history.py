"""tfyarn history: the RM's reports and the saved status documents merged, filtered and printed."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
from click.testing import CliRunner

from tests.unit.test_page import doc, task
from tfyarn import history
from tfyarn.history import HistoryEntry, entries, report_of, select
from tfyarn.status import JobReport, JobState, TaskState


def rm(app_id: str, state: JobState = JobState.SUCCEEDED, start_s: float = 1000.0, end_s: float = 1060.0) -> JobReport:
    return JobReport(app_id=app_id, name="rm-" + app_id[-1], state=state, yarn_state="FINISHED",
                     final_status=state.value, diagnostics="", tracking_url="", queue="q", user="ann",
                     start_time_ms=int(start_s * 1000), finish_time_ms=int(end_s * 1000),
                     tags=("framework:pytorch", "tfyarn"))


def saved(app_id: str, state: str = "SUCCEEDED", submitted: float = 500.0, gpus: int = 1):
    return doc(app_id=app_id, state=state, timeline={"submitted": submitted, "am_started": submitted + 1},
               time=submitted + 30, duration_s=30.0,
               tasks=(task(gpus_asked=gpus, state=TaskState.SUCCEEDED), task(name="worker:1", index=1, gpus_asked=gpus)))


def test_each_job_once_the_rms_state_and_the_documents_tasks_newest_first():
    got = entries([rm("application_1_0002", JobState.RUNNING, 2000.0, 0.0), rm("application_1_0001")],
                  {"application_1_0001": saved("application_1_0001", gpus=2), "application_0_0009": saved("application_0_0009")})
    assert [(e.app_id, e.state, e.tasks, e.gpus, e.source) for e in got] == [
        ("application_1_0002", "RUNNING", None, None, "yarn"),
        ("application_1_0001", "SUCCEEDED", 2, 4, "both"),
        ("application_0_0009", "SUCCEEDED", 2, 2, "hdfs"),
    ]
    assert got[0].duration_s is None and got[1].duration_s == 60.0 and got[2].duration_s == 30.0
    assert got[1].framework == "pytorch" and got[2].framework == "pytorch" and got[2].start_time == 500.0


def test_a_forgotten_jobs_report_comes_from_its_document():
    rep = report_of(saved("application_0_0009", state="FAILED"))
    assert (rep.state, rep.yarn_state, rep.final_status, rep.start_time_ms, rep.finish_time_ms) == (
        JobState.FAILED, "", "FAILED", 500_000, 530_000)
    assert rep.framework == "pytorch" and rep.tracking_url == ""
    # A document an AM saved before it died mid-run did not end well.
    assert report_of(saved("application_0_0008", state="RUNNING")).state == JobState.FAILED


@pytest.mark.parametrize(("since", "state", "want"), [
    (0, "", ["a", "b", "c"]), (100, "", ["a", "b"]), (0, "failed", ["b"]), (100, "SUCCEEDED", ["a"])])
def test_select_by_age_and_state(since, state, want):
    def e(name: str, st: str, start: float) -> HistoryEntry:
        return HistoryEntry(name, name, "ann", "none", "q", st, start, 1.0, 1, 0, "hdfs")
    items = [e("a", "SUCCEEDED", 950.0), e("b", "FAILED", 920.0), e("c", "SUCCEEDED", 100.0)]
    assert [x.app_id for x in select(items, since, 1000.0, state)] == want


def test_the_command_prints_a_table_json_and_the_warnings(monkeypatch):
    import tfyarn.client
    from tfyarn.cli.history_cmd import history as history_cmd

    found = entries([rm("application_1_0001")], {"application_0_0009": saved("application_0_0009")})

    class Fake:
        def __enter__(self) -> Fake:
            return self

        def __exit__(self, *_: object) -> None:
            pass

        def history(self, user: str = "") -> tuple[list[HistoryEntry], list[str]]:
            return found, ["the ResourceManager did not answer (x): only the jobs saved on HDFS are listed"]

    monkeypatch.setattr(tfyarn.client, "Client", Fake)
    res = CliRunner().invoke(history_cmd, [])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["APPLICATION", "NAME", "FRAMEWORK", "STATE", "QUEUE", "STARTED", "DURATION",
                                "TASKS", "GPUS", "KNOWN", "TO"]
    assert lines[1].split()[0] == "application_1_0001" and lines[1].endswith("RM")
    assert lines[2].endswith("HDFS") and " 2 " in lines[2]
    assert "Warning: the ResourceManager did not answer" in res.stderr
    as_json = json.loads(CliRunner().invoke(history_cmd, ["--json"]).stdout)
    assert [j["source"] for j in as_json] == ["yarn", "hdfs"] and set(as_json[0]) == set(history.HistoryEntry.__dataclass_fields__)
    assert CliRunner().invoke(history_cmd, ["--state", "killed"]).stdout == "No jobs match.\n"
    bad = CliRunner().invoke(history_cmd, ["--since", "a week"])
    assert bad.exit_code == 2 and "'a week' is not a duration" in bad.output
