"""The typed wire formats (tfyarn.wire): round trips, tolerance, refusals, and one document for every reader."""
from __future__ import annotations

import json
import re
import time
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from appmaster.am import master, page
from appmaster.am.tasks import TaskTable
from appmaster.am.web import StatusServer
from tests.unit.test_page import doc, task
from tfyarn import protocol, wire
from tfyarn.spec import JobSpec, RoleSpec
from tfyarn.status import JobReport, JobState, TaskState
from tfyarn.wire import (
    ClusterView,
    EventsRecord,
    ExitRecord,
    GpuAssignment,
    GpuSample,
    JobStatus,
    OutputStatus,
    Registration,
    SnapshotRecord,
    StatusDoc,
    TaskRecords,
    TaskStatus,
    TelemetryRecord,
    TensorBoardStatus,
    WireError,
)

STATUS_DOC_PAGE = Path(__file__).resolve().parents[2] / "docs" / "monitoring.md"
APP = "application_1_0001"


# --- round trips ---------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [
    doc(),
    doc(tensorboard=None, outputs=(OutputStatus("model", "hdfs:///m", "chief:0"),), state="FAILED",
        tasks=(task(state=TaskState.FAILED, exit_code=3, stderr_tail="boom", history=("c1 on h: FAILED",)),)),
    Registration("h:1", 0.5, "container_1", (0, 1), "yarn"),
    Registration("h:1", container="container_1"),
    EventsRecord({"localized": 1.0, "registered": 2.5}, "container_1"),
    TelemetryRecord((GpuSample(0, 50, 100, 16000),), 3.0, "container_1"),
    ExitRecord(137, "Killed", 4.0, "container_1"),
    SnapshotRecord(("hdfs:///m.snapshots/1",), 5.0),
], ids=lambda v: type(v).__name__)
def test_every_record_survives_json_and_back(value: Any):
    assert type(value).from_json(value.to_json()) == value
    assert json.loads(value.to_json()) == value.to_dict()


def test_the_cluster_view_and_gpu_assignment_keep_their_plain_json_shapes():
    view = ClusterView.of({"chief": ["c:1"], "worker": ["w0:2", "w1:3"]})
    assert json.loads(view.to_json()) == {"chief": ["c:1"], "worker": ["w0:2", "w1:3"]}
    assert ClusterView.from_json(view.to_json()) == view and view.roles["worker"] == ("w0:2", "w1:3")
    assert GpuAssignment.from_json(GpuAssignment((1, 3)).to_json()).gpus == (1, 3)
    assert json.loads(GpuAssignment(()).to_json()) == []


def test_every_executor_record_names_its_container_under_the_shared_field():
    for kind in (Registration, EventsRecord, TelemetryRecord, ExitRecord):
        assert protocol.RECORD_CONTAINER in wire.public_fields(kind), kind


# --- tolerance -----------------------------------------------------------------------------------
def test_unknown_fields_are_ignored_at_every_level():
    data = doc().to_dict()
    data["added_by_a_newer_am"] = {"x": 1}
    data["tasks"][0]["also_new"] = [1, 2]
    data["tensorboard"]["port"] = 6006
    assert StatusDoc.from_dict(data) == doc()
    assert ExitRecord.from_json('{"code": 0, "container": "c", "signal": 15}') == ExitRecord(0, container="c")


def test_a_document_saved_before_schema_version_parses_as_version_0():
    """What the AM wrote before the document was typed: vars(task), internals and all, no version."""
    legacy_task = {"role": "worker", "index": 0, "state": "SUCCEEDED", "container_id": "worker_0",
                   "yarn_container_id": "container_1_0001_01_000002", "host": "node-1",
                   "node_http_address": "node-1:8042", "address": "node-1:4000", "staging_s": 0.1, "exit_code": 0,
                   "stderr_tail": "", "exit_message": "", "gpus_asked": 0, "gpus": [], "gpu_binding": "none",
                   "restarts": 0, "timeline": {"allocated": 1.0}, "telemetry": [], "requested_at": 0.5,
                   "restart_at": None, "previous_address": "", "history": [], "name": "worker:0"}
    legacy = {"app_id": APP, "name": "old", "framework": "none", "user": "ann", "queue": "default",
              "state": "SUCCEEDED", "diagnostics": "all 1 worker task(s) succeeded", "time": 9.0,
              "duration_s": 8.0, "timeline": {"submitted": 1.0, "am_started": None}, "tasks": [legacy_task],
              "tensorboard": None}
    parsed = StatusDoc.from_json(json.dumps(legacy))
    assert parsed.schema_version == 0 and parsed.outputs == () and parsed.attempt == 1
    (t,) = parsed.tasks
    assert (t.name, t.state, t.exit_code, t.address, t.log_url) == ("worker:0", TaskState.SUCCEEDED, 0,
                                                                    "node-1:4000", "")
    assert '"restart_at"' not in parsed.to_json() and '"container_id"' not in parsed.to_json()


def test_a_newer_schema_is_refused_with_a_message_saying_to_upgrade():
    data = dict(doc().to_dict(), schema_version=wire.SCHEMA_VERSION + 1)
    with pytest.raises(WireError, match=r"schema_version 2, newer than this tfyarn reads \(1\): upgrade tfyarn"):
        StatusDoc.from_dict(data)


# --- refusals --------------------------------------------------------------------------------------
def _set(path: str, value: Any) -> dict[str, Any]:
    """doc()'s JSON form with the field at dotted ``path`` (list items by number) set to ``value``."""
    data: Any = doc().to_dict()
    *parents, last = path.split(".")
    node = data
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    node[last] = value
    return data


@pytest.mark.parametrize("path,value,message", [
    ("tasks.0.index", "0", "status document.tasks[0].index: expected an integer, got '0'"),
    ("tasks.0.exit_code", True, "status document.tasks[0].exit_code: expected an integer or null, got True"),
    ("tasks.0.state", "RUNNIN", "status document.tasks[0].state: expected one of WAITING, REQUESTED, RUNNING, "),
    ("tasks.0.gpus", ["1"], "status document.tasks[0].gpus[0]: expected an integer, got '1'"),
    ("tasks.0.telemetry", [{"index": 0}], "status document.tasks[0].telemetry[0]: missing field 'util_pct'"),
    ("timeline", {"submitted": "soon"}, "status document.timeline.submitted: expected a number or null, got 'soon'"),
    ("tasks", {"worker:0": {}}, "status document.tasks: expected a list of an object (TaskStatus), got {"),
    ("tensorboard", "running", "status document.tensorboard: expected an object (TensorBoardStatus) or null"),
    ("schema_version", "1", "status document.schema_version: expected an integer, got '1'"),
    ("state", None, "status document.state: expected a string, got None"),
])
def test_wrong_types_are_refused_naming_the_field(path: str, value: Any, message: str):
    with pytest.raises(WireError) as e:
        StatusDoc.from_dict(_set(path, value))
    assert str(e.value).startswith(message), str(e.value)


def test_missing_fields_and_non_json_are_refused():
    with pytest.raises(WireError, match="status document: missing field 'app_id'"):
        StatusDoc.from_dict({"state": "RUNNING"})
    with pytest.raises(WireError, match="exit record: not JSON"):
        ExitRecord.from_json(b"{")
    with pytest.raises(WireError, match=r"cluster view.worker\[0\]: expected a string, got 7"):
        ClusterView.from_json('{"worker": [7]}')
    with pytest.raises(WireError, match="registration.staging_s: expected a number, got '0.5'"):
        Registration.from_json('{"address": "h:1", "staging_s": "0.5"}')


def test_the_client_reports_an_unreadable_document_as_one_error_naming_the_job():
    from tfyarn.client import _parse_doc
    from tfyarn.errors import TfyarnError

    with pytest.raises(TfyarnError, match=rf"the status document of {APP} \(its AM's log\) is unreadable: "
                                          r"status document.tasks\[0\].index"):
        _parse_doc(json.dumps(_set("tasks.0.index", "0")), APP, "its AM's log")


# --- the executor's records as the AM reads them ---------------------------------------------------
def test_task_records_skip_what_a_replaced_container_wrote():
    kv = {protocol.kv_task_addr("worker", 0): Registration("h:1", 0.2, "container_new").to_json().encode(),
          protocol.kv_task_exit("worker", 0): ExitRecord(137, container="container_old").to_json().encode(),
          protocol.kv_task_events("worker", 0): b'{"stages": {"localized": 1.0}}',  # no container: an old executor
          protocol.kv_task_gpus("worker", 0): b"[0]"}  # the AM's own answer, not a record
    mine = TaskRecords.read(kv, "worker", 0, "container_new")
    assert mine.registration == Registration("h:1", 0.2, "container_new")
    assert mine.exit is None and mine.telemetry is None
    assert mine.events == EventsRecord({"localized": 1.0})


# --- the AM builds the document from public fields only --------------------------------------------
def _job(monkeypatch: pytest.MonkeyPatch, workers: int = 2) -> master.Job:
    monkeypatch.setenv("USER", "ann")
    monkeypatch.setenv(protocol.ENV_SUBMIT_TIME, "100.0")
    spec = JobSpec(name="demo", command=("python", "t.py"), roles={"worker": RoleSpec("worker", workers, gpus=1)})
    return master.Job(APP, spec.validate(), TaskTable.for_job(spec.validate()), 100.5)


def test_the_ams_document_holds_public_fields_only(monkeypatch):
    job = _job(monkeypatch)
    t = job.table.tasks[0]
    t.state, t.container_id, t.requested_at, t.previous_address = TaskState.RESTARTING, "worker_0", 101.0, "h:1"
    t.restart_at, t.history = 140.0, ["container_1 on h: FAILED (exit code 137)"]
    status = job.status("RUNNING")
    data = json.loads(status.to_json())
    assert list(data) == list(wire.public_fields(StatusDoc)) and data["schema_version"] == wire.SCHEMA_VERSION
    for t_json in data["tasks"]:
        assert list(t_json) == list(wire.public_fields(TaskStatus))
    for internal in ('"restart_at"', '"requested_at"', '"container_id"', '"previous_address"', "140.0", "worker_0"):
        assert internal not in status.to_json(), internal
    assert status.tasks[0].history == ("container_1 on h: FAILED (exit code 137)",)
    t.history.append("later")  # the AM goes on updating its table: the document it published does not change
    assert len(status.tasks[0].history) == 1
    assert job.status("RUNNING").to_dict()["tasks"][0]["state"] == "RESTARTING"  # as JSON values


def test_the_ams_outlets_carry_one_serialization(monkeypatch, capfd):
    """api/status, the key-value copy, the final log line and status.json: the same bytes."""
    from tests.fakes import FakeApp

    monkeypatch.setenv("USER", "ann")
    spec = JobSpec(name="demo", command=("python", "t.py"), roles={"worker": RoleSpec("worker", 1)}).validate()
    monkeypatch.setenv(protocol.ENV_JOB, protocol.encode_env(spec.to_dict()))
    app = FakeApp(APP)
    saved: list[str] = []
    servers: list[StatusServer] = []

    class KeptOpen(StatusServer):
        def close(self) -> None:  # the test reads it after main() ends
            servers.append(self)

    monkeypatch.setattr(master.skein.ApplicationClient, "from_current", staticmethod(lambda: app))
    monkeypatch.setattr(master, "page_server", lambda: KeptOpen("127.0.0.1"))
    monkeypatch.setattr(master, "run", lambda *_: ("SUCCEEDED", "all 1 worker task(s) succeeded"))
    monkeypatch.setattr(master, "save_status", lambda body, user, app_id, readers=(): saved.append(body))
    assert master.main() == 0
    (web,) = servers
    try:
        with urllib.request.urlopen(f"{web.url}/{protocol.API_STATUS}", timeout=5) as resp:
            served = resp.read().decode()
    finally:
        StatusServer.close(web)
    lines = [ln for ln in capfd.readouterr().out.splitlines() if ln.startswith(protocol.AM_STATUS_LINE)]
    assert [ln[len(protocol.AM_STATUS_LINE):] for ln in lines] == saved == [served]
    assert app.kv[protocol.KV_STATUS].decode() == served
    final = StatusDoc.from_json(served)
    assert final.state == "SUCCEEDED" and final.tasks[0].name == "worker:0"


# --- one typed document for the page, the CLI and the JSON -----------------------------------------
class _FakeClient:
    """tfyarn.client.Client with YARN's report and the AM's document given."""

    report_: JobReport
    doc_: StatusDoc | None

    def __enter__(self) -> _FakeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def report(self, app_id: str) -> JobReport:
        return self.report_

    def status_doc(self, app_id: str) -> StatusDoc | None:
        return self.doc_


def _report(state: JobState = JobState.RUNNING) -> JobReport:
    return JobReport(app_id=APP, name="demo", state=state, yarn_state=state.value, final_status="UNDEFINED",
                     diagnostics="", tracking_url="http://rm:8088/proxy/application_1_0001/", queue="default",
                     user="ann", start_time_ms=100_000, finish_time_ms=0, tags=("framework:none", "tfyarn"))


def _cli(monkeypatch: pytest.MonkeyPatch, status_doc: StatusDoc | None, *args: str) -> str:
    import tfyarn.client
    from tfyarn.cli.jobs_cmd import status

    monkeypatch.setattr(_FakeClient, "report_", _report(), raising=False)
    monkeypatch.setattr(_FakeClient, "doc_", status_doc, raising=False)
    monkeypatch.setattr(tfyarn.client, "Client", _FakeClient)
    res = CliRunner().invoke(status, [*args, APP])
    assert res.exit_code == 0, res.output
    return res.output


def test_the_page_the_cli_and_the_json_read_the_same_typed_document(monkeypatch):
    job = _job(monkeypatch)
    for i, t in enumerate(job.table.tasks):
        t.state, t.host, t.node_http_address = TaskState.RUNNING, f"node-{i}", f"node-{i}:8042"
        t.yarn_container_id, t.address, t.staging_s = f"container_1_0001_01_00000{i + 2}", f"node-{i}:400{i}", 1.25
        t.gpus, t.gpu_binding, t.restarts, t.timeline = [i + 1], "tfyarn", i, {"allocated": 101.0 + i}
    job.table.tasks[1].state, job.table.tasks[1].exit_code = TaskState.FAILED, 7
    status = job.status("RUNNING")

    html = page.render(status)
    table = _cli(monkeypatch, status)
    printed = json.loads(_cli(monkeypatch, status, "--json"))
    for t in status.tasks:
        shown = [t.host, t.yarn_container_id, t.state.value, str(t.restarts), f"{t.staging_s:.1f}s",
                 ",".join(map(str, t.gpus))]
        row = re.search(rf'<tr class="task" data-task="{t.name}">(.*?)</tr>', html).group(1)  # type: ignore[union-attr]
        line = next(ln for ln in table.splitlines() if ln.startswith(t.name))
        for value in shown:
            assert value in row and value in line, (value, row, line)
        assert t.address in line and ("" if t.exit_code is None else str(t.exit_code)) in line
    assert "<td>7</td>" in html
    # --json: the same tasks and timeline, read back through the same types
    assert printed["tasks"] == status.to_dict()["tasks"] and printed["timeline"] == status.to_dict()["timeline"]
    back = JobStatus.from_dict(printed)
    assert back.doc is not None and back.doc.tasks == status.tasks and back.report == _report()
    assert printed["schema_version"] == wire.SCHEMA_VERSION and printed["tracking_url"] == _report().tracking_url


def test_status_json_before_the_am_published_has_yarns_fields_and_nulls(monkeypatch):
    printed = json.loads(_cli(monkeypatch, None, "--json"))
    assert printed == {**JobStatus(_report()).to_dict()}
    assert printed["state"] == "RUNNING" and printed["tasks"] is None and printed["framework"] == "none"
    assert set(printed) == {"schema_version", *wire.REPORT_FIELDS, *wire.AM_FIELDS}
    assert JobStatus.from_dict(printed) == JobStatus(_report())


# --- docs/monitoring.md documents exactly these fields -----------------------------------------------------
def _readme_tables() -> dict[str, list[list[str]]]:
    """Each table of docs/monitoring.md's "Status document" section, by the line that introduces it."""
    text = STATUS_DOC_PAGE.read_text()
    section = text.split("## Status document (`--json`)\n", 1)[1].split("\n## ", 1)[0]
    tables: dict[str, list[list[str]]] = {}
    title = ""
    for line in section.splitlines():
        if line.endswith(":") and not line.startswith("|"):
            title = line[:-1]
        elif line.startswith("| `"):
            tables.setdefault(title, []).append([c.strip() for c in line.strip("|").split("|")])
    return tables


def test_the_readme_lists_exactly_the_public_fields():
    tables = _readme_tables()
    names = {title: [row[0].strip("`") for row in rows] for title, rows in tables.items()}
    assert sorted(names) == sorted(["Job", "Task (`tasks[]`)", "GPU sample (`tasks[].telemetry[]`)",
                                    "Progress (`tasks[].progress`)", "TensorBoard (`tensorboard`)",
                                    "Output (`outputs[]`)"])
    assert sorted(names["Job"]) == sorted({"schema_version", *wire.REPORT_FIELDS, *wire.AM_FIELDS})
    assert sorted(names["Job"]) == sorted(JobStatus(_report(), doc()).to_dict())
    assert names["Task (`tasks[]`)"] == list(wire.public_fields(TaskStatus))
    assert names["GPU sample (`tasks[].telemetry[]`)"] == list(wire.public_fields(GpuSample))
    assert names["Progress (`tasks[].progress`)"] == list(wire.public_fields(wire.Progress))
    assert names["TensorBoard (`tensorboard`)"] == list(wire.public_fields(TensorBoardStatus))
    assert names["Output (`outputs[]`)"] == list(wire.public_fields(OutputStatus))
    source = {row[0].strip("`"): row[2] for row in tables["Job"]}
    assert {f for f, s in source.items() if s in ("YARN", "both")} == set(wire.REPORT_FIELDS)
    assert {f for f, s in source.items() if s in ("AM", "both", "tfyarn")} == set(wire.public_fields(StatusDoc))
    assert {f for f, s in source.items() if s == "tfyarn"} == {"schema_version"}


def test_list_json_prints_yarns_fields_of_each_job(monkeypatch):
    import tfyarn.client
    from tfyarn.cli.jobs_cmd import list_

    class Listing(_FakeClient):
        def list_jobs(self) -> list[JobReport]:
            return [_report(), replace(_report(JobState.SUCCEEDED), app_id="application_1_0002")]

    monkeypatch.setattr(tfyarn.client, "Client", Listing)
    res = CliRunner().invoke(list_, ["--json"])
    assert res.exit_code == 0, res.output
    jobs = json.loads(res.output)
    assert [list(j) for j in jobs] == [list(wire.REPORT_FIELDS)] * 2
    assert [j["state"] for j in jobs] == ["RUNNING", "SUCCEEDED"] and jobs[0]["tags"] == ["framework:none", "tfyarn"]


def test_building_the_document_for_1000_tasks_stays_cheap(monkeypatch):
    """The AM rebuilds it on every change: typed fields must not cost what dataclasses.asdict did."""
    job = _job(monkeypatch, workers=1000)
    t0 = time.perf_counter()
    body = job.status("RUNNING").to_json()
    assert time.perf_counter() - t0 < 0.5 and len(StatusDoc.from_json(body).tasks) == 1000
