"""A restarted output task gets this job's latest snapshot back (appmaster.executor.restore), on the local disk."""

from __future__ import annotations

import calendar
import json
import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from appmaster.executor import main as executor
from appmaster.executor import restore, staging

# container: the executor tests' autouse fixture (a task container's surroundings, skein's client a FakeApp)
from tests.unit.test_executor_main import as_task, container, exit_record, play_am  # noqa: F401
from tfyarn import protocol, wire
from tfyarn.spec import JobSpec, OutputSpec, RoleSpec
from tfyarn.taskenv import StagingPlan

APP = "application_1733250000000_0003"
OTHER = "application_1733250000000_0004"
NOON = calendar.timegm((2026, 12, 3, 12, 0, 0))


def plan(dest: Path, resume: bool = True) -> StagingPlan:
    return StagingPlan(outputs=({"src": "./model", "dest": str(dest)},), resume=resume)


def snapshot(dest: Path, app_id: str, files: dict[str, str], tmp: Path, when: float = NOON) -> str:
    """Publish ``files`` as ``app_id``'s snapshot (taken at ``when``) of the output at ``dest``: the executor's code."""
    work = tmp / f"work-{app_id}-{when}"
    for rel, text in files.items():
        (work / "model" / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / "model" / rel).write_text(text)
    real = staging.time
    staging.time = SimpleNamespace(time=lambda: when)  # type: ignore[assignment]
    try:
        [uri] = staging.publish_snapshot(plan(dest), str(work), app_id)
    finally:
        staging.time = real
    assert uri.endswith(protocol.snapshot_name(app_id, when))
    return uri


def test_a_snapshot_name_carries_its_time_and_application_and_parses_back():
    when = calendar.timegm((2026, 12, 3, 19, 45, 1))
    name = protocol.snapshot_name(APP, when)
    assert name == f"20261203T194501Z-{APP}"
    assert protocol.parse_snapshot_name(name) == ("20261203T194501Z", APP)
    later = protocol.snapshot_name(APP, when + 61)
    assert sorted([later, name]) == [name, later]  # sorted by time


@pytest.mark.parametrize(
    "name",
    [
        "20261203T194501Z",  # before snapshots named their application
        f".20261203T194501Z-{APP}._tfyarn_tmp_20261203T194501Z-{APP}",  # an upload in progress
        f"20261203T194501Z-{APP}-x",
        "20261203-application_1_2",
        f"x{APP}",
        "",
    ],
)
def test_anything_else_is_not_a_snapshot_name(name):
    assert protocol.parse_snapshot_name(name) is None


def test_the_latest_snapshot_is_the_newest_of_this_application_only():
    names = [
        f"20261203T194501Z-{APP}",
        f"20261203T194759Z-{APP}",
        f"20261203T194630Z-{APP}",
        f"20261203T195900Z-{OTHER}",
        "20261203T200000Z",
        f".20261203T200100Z-{APP}._tfyarn_tmp_x",
    ]
    assert restore.latest_snapshot(names, APP) == f"20261203T194759Z-{APP}"
    assert restore.latest_snapshot(names, OTHER) == f"20261203T195900Z-{OTHER}"
    assert restore.latest_snapshot(names, "application_1733250000000_0005") is None


def test_the_latest_snapshot_of_this_job_lands_in_the_output_dir(tmp_path, caplog):
    dest = tmp_path / "out" / "model"
    snapshot(dest, APP, {"ckpt-1.index": "one", "checkpoint": "ckpt-1"}, tmp_path, NOON)
    latest = snapshot(
        dest, APP, {"ckpt-2.index": "two", "sub/ckpt-2.data": "x" * 1000, "checkpoint": "ckpt-2"}, tmp_path, NOON + 60
    )
    snapshot(dest, APP, {"checkpoint": "ckpt-0"}, tmp_path, NOON - 3600)  # published last, taken first
    snapshot(dest, OTHER, {"checkpoint": "someone else's"}, tmp_path, NOON + 120)  # newer, but another job's
    workdir = tmp_path / "restarted"
    workdir.mkdir()
    with caplog.at_level(logging.INFO, logger="tfyarn.executor.restore"):
        [done] = restore.restore_outputs(plan(dest), str(workdir), APP)
    model = workdir / "model"
    assert {str(p.relative_to(model)): p.read_text() for p in model.rglob("*") if p.is_file()} == {
        "ckpt-2.index": "two",
        "sub/ckpt-2.data": "x" * 1000,
        "checkpoint": "ckpt-2",
    }
    assert (done.src, done.uri, done.files, done.bytes) == ("./model", latest, 3, 1009)
    [line] = [r.getMessage() for r in caplog.records if r.name == "tfyarn.executor.restore"]
    assert line.startswith(f"restored ./model from {latest} (3 file(s), 0.0 MiB, ") and line.endswith(" s)")


def test_no_snapshot_of_this_job_restores_nothing(tmp_path):
    dest = tmp_path / "out" / "model"
    workdir = tmp_path / "w"
    workdir.mkdir()
    assert restore.restore_outputs(plan(dest), str(workdir), APP) == []  # no .snapshots dir at all
    snapshot(dest, OTHER, {"checkpoint": "theirs"}, tmp_path)
    assert restore.restore_outputs(plan(dest), str(workdir), APP) == []  # only another job's
    assert not (workdir / "model").exists()


def test_no_resume_restores_nothing(tmp_path):
    dest = tmp_path / "out" / "model"
    snapshot(dest, APP, {"checkpoint": "ckpt-1"}, tmp_path)
    assert restore.restore_outputs(plan(dest, resume=False), str(tmp_path), APP) == []
    assert not (tmp_path / "model").exists()


def test_snapshots_that_cannot_be_read_raise(tmp_path):
    dest = tmp_path / "model"
    Path(f"{dest}.snapshots").write_text("not a dir")
    with pytest.raises(restore.RestoreError, match=r"cannot list the snapshots in file://.*model\.snapshots"):
        restore.restore_outputs(plan(dest), str(tmp_path), APP)


def output_job(dest: Path, resume: bool = True) -> JobSpec:
    seen = "import json, os; json.dump(open('model/checkpoint').read(), open('seen.json', 'w'))"
    return JobSpec(
        name="j",
        command=("python", "-c", seen),
        roles={"worker": RoleSpec("worker", 1)},
        outputs=(OutputSpec("./model", str(dest)),),
        resume=resume,
    ).validate()


def test_the_executor_restores_before_the_command_starts_and_stamps_it(monkeypatch, tmp_path):
    app = executor.skein.ApplicationClient.from_current()
    dest = tmp_path / "out" / "model"
    snapshot(dest, app.id, {"checkpoint": "ckpt-7"}, tmp_path)
    monkeypatch.setattr(executor, "snapshots", lambda *args: None)  # the fake has no event stream (test_monitor)
    as_task(monkeypatch, output_job(dest), "worker", 0)
    am = play_am(app, "worker", 0, lambda me: {"worker": [me]})
    assert executor.main() == 0 and am.result()
    assert json.loads(Path("seen.json").read_text()) == "ckpt-7"
    stages = wire.EventsRecord.from_json(app.kv[protocol.kv_task_events("worker", 0)]).stages
    assert stages["inputs_staged"] <= stages[protocol.STAGE_RESTORED] <= stages["registered"]
    assert (dest / "checkpoint").read_text() == "ckpt-7"  # and published at the end, as ever


def test_a_failed_restore_ends_the_task_before_it_registers(monkeypatch, tmp_path):
    app = executor.skein.ApplicationClient.from_current()
    dest = tmp_path / "out" / "model"
    dest.parent.mkdir()
    Path(f"{dest}.snapshots").write_text("not a dir")
    as_task(monkeypatch, output_job(dest), "worker", 0)
    assert executor.main() == protocol.EXIT_STAGING_FAILED
    record = exit_record(app, "worker", 0)
    assert record.code == protocol.EXIT_STAGING_FAILED
    assert "restoring the latest snapshot failed (--no-resume starts over instead): RestoreError" in record.stderr_tail
    assert protocol.kv_task_addr("worker", 0) not in app.kv and not Path("seen.json").exists()
