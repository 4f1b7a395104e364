"""Job events (appmaster.am.events): what the AM records, the status document's `events`, the --on-event hook.

The AM's loop runs against the in-memory skein stand-in, driven as in test_am_loop.py (its Gang and
fixtures are reused); the hook runs real /bin/sh commands.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from appmaster.am import events, master
from tests.fakes import FakeStatusServer
from tests.unit import test_am_loop as loop
from tests.waiting import Background, wait_until
from tfyarn import logfmt, protocol, wire
from tfyarn.spec import RoleSpec
from tfyarn.status import JobReport, JobState, TaskState

NODES = loop.NODES
fast_loop, gang = loop.fast_loop, loop.gang  # the AM loop's fixtures: a 5 ms poll, the Gang factory
LOST = "Container released on a *lost* node"
STATUS_DOC_PAGE = Path(__file__).resolve().parents[2] / "docs" / "monitoring.md"


def kinds(g: Any) -> list[str]:
    return [e.kind for e in g.job.events.recent()]


@pytest.fixture
def am_log(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> pytest.LogCaptureFixture:
    """The AM logger's records, however logfmt set it up."""
    monkeypatch.setattr(logging.getLogger(logfmt.AM_LOGGER), "handlers", [caplog.handler])
    monkeypatch.setattr(logging.getLogger(logfmt.AM_LOGGER), "propagate", False)  # each record once
    caplog.set_level(logging.INFO, logger=logfmt.AM_LOGGER)
    return caplog


# --- what the AM records ---------------------------------------------------------------------------
def test_a_restart_is_an_event_naming_the_task_why_its_host_the_restart_and_the_delay(gang):
    g = gang(worker=RoleSpec("worker", 2, restart_policy="on-failure", restart_backoff_s=4)).up()
    g.exit("worker:1", 3, "bad batch")
    g.step(now=1000.0)
    [e] = g.job.events.recent()
    assert (e.kind, e.task, e.host) == ("task_restart", "worker:1", "node1")
    assert e.message == "worker:1 failed (exit code 3) on node1; restart 1 in 4 s"
    assert abs(e.time - time.time()) < 5
    # in the status document, and through its JSON
    doc = wire.StatusDoc.from_json(g.job.status("RUNNING").to_json())
    assert doc.events == (e,)


def test_a_whole_job_restart_is_one_event_for_the_task_that_failed(gang):
    g = gang(framework="pytorch", worker=RoleSpec("worker", 2, restart_policy="all", restart_backoff_s=1)).up()
    g.exit("worker:0", 1)
    g.step()
    [e] = g.job.events.recent()
    assert (e.kind, e.task, e.host) == ("task_restart", "worker:0", "node0")
    assert e.message == "worker:0 failed (exit code 1) on node0; restarting all 2 task(s), job restart 1 in 1 s"


def test_a_container_of_a_lost_node_is_a_node_lost_event_then_its_restart(gang):
    g = gang(worker=RoleSpec("worker", 2, restart_policy="on-failure", restart_backoff_s=0)).up()
    yarn_id = g.yarn_id("worker:0")
    g.app.finish("worker_0", "FAILED", LOST)  # what skein reports for YARN's ABORTED on a lost node
    g.step()
    lost, restart = g.job.events.recent()
    assert (lost.kind, lost.task, lost.host) == ("node_lost", "worker:0", "node0")
    assert yarn_id in lost.message and LOST in lost.message
    assert (restart.kind, restart.task) == ("task_restart", "worker:0") and f"({LOST})" in restart.message


def test_a_lost_node_that_ends_the_job_is_recorded_once_then_the_failure_and_the_end(gang):
    g = gang(worker=2)
    am = g.run()
    g.app.allocate_all(NODES)
    g.wait_running()
    g.app.finish("worker_1", "FAILED", LOST)
    status, diagnostics = am.result()
    assert status == "FAILED" and "worker:1 failed" in diagnostics
    assert kinds(g) == ["node_lost", "task_failed"]
    failed = g.job.events.recent()[1]
    assert (failed.task, failed.host) == ("worker:1", "node1")
    assert failed.message == f"worker:1 failed ({LOST}) on node1; the job fails"


def test_a_failure_that_ends_the_job_is_a_task_failed_event(gang):
    g = gang(worker=RoleSpec("worker", 2, restart_policy="on-failure", max_restarts=1, restart_backoff_s=0))
    am = g.run()
    g.app.allocate_all(NODES)
    g.wait_running()
    g.exit("worker:1", 1)
    wait_until(lambda: g.task("worker:1").container_id == "worker_2", what="the restart's request")
    g.app.allocate("worker_2", NODES[0])
    wait_until(lambda: g.task("worker:1").state == TaskState.RUNNING)
    g.exit("worker:1", 9)
    assert am.result()[0] == "FAILED"
    assert kinds(g) == ["task_restart", "task_failed"]
    failed = g.job.events.recent()[-1]
    assert (failed.task, failed.host) == ("worker:1", "node0")
    assert failed.message == "worker:1 failed (exit code 9) on node0 after 1 restart(s); the job fails"


def test_a_tolerated_failure_and_a_success_record_no_failure(gang):
    g = gang(framework="tensorflow", chief=1, worker=1, ps=1, evaluator=1).up()
    am = g.run()
    g.exit("evaluator:0", 1)
    wait_until(lambda: g.task("evaluator:0").state == TaskState.FAILED)
    g.one_more_loop()
    g.exit("chief:0", 0)
    assert am.result()[0] == "SUCCEEDED" and kinds(g) == []


@pytest.mark.parametrize(
    "message,lost",
    [
        (LOST, True),
        ("container released on a lost node", True),
        ("Container released on a *LOST* node.", True),
        ("Node lost: heartbeat expired", True),
        ("Container killed by the ApplicationMaster.", False),
        ("Container released by application", False),
        ("Container expired since it was unused", False),
        ("Container preempted by scheduler", False),
        ("exit code 1", False),
        ("", False),
    ],
)
def test_yarns_lost_node_message_is_recognised(message, lost):
    assert events.is_node_lost(message) is lost


def test_the_document_keeps_the_last_100_events_oldest_first():
    ev = events.Events()
    for i in range(events.MAX_EVENTS + 5):
        ev.record("task_restart", f"m{i}", "worker:0", "h")
    kept = ev.recent()
    assert len(kept) == events.MAX_EVENTS and ev.count == events.MAX_EVENTS + 5
    assert (kept[0].message, kept[-1].message) == ("m5", f"m{events.MAX_EVENTS + 4}")


# --- the hook --------------------------------------------------------------------------------------
def test_main_hands_every_event_to_the_hook_on_stdin_and_in_the_env_and_waits_for_job_end(gang, monkeypatch, tmp_path):
    out = tmp_path / "events"
    # sleeps first: the file has job_end's line only if main waited for the hook before it ended
    hook = (
        f'sleep 0.5; cat >> {out}; echo >> {out}; printf "%s\\n" "$TFYARN_EVENT" >> {out}.env; '
        f'echo "$TFYARN_APP_ID" >> {out}.app'
    )
    g = gang(fields={"on_event": hook}, worker=RoleSpec("worker", 1, restart_policy="on-failure", restart_backoff_s=0))
    master.adopt_initial(g.job.table, time.time())
    monkeypatch.setenv(protocol.ENV_JOB, protocol.encode_env(g.spec.to_dict()))
    monkeypatch.setattr(master.skein.ApplicationClient, "from_current", staticmethod(lambda: g.app))
    monkeypatch.setattr(master, "page_server", FakeStatusServer)
    monkeypatch.setattr(master, "save_status", lambda body, user, app_id, readers=(): None)
    am = Background(master.main, name="AM main")
    g.app.allocate("worker_0", NODES[0])
    g.register("worker:0")
    g.exit("worker:0", 4)
    wait_until(lambda: any(c.id == "worker_1" for c in g.app.get_containers()), what="the restart's container")
    g.app.allocate("worker_1", NODES[1])
    g.exit("worker:0", 0, yarn_id=g.app.container("worker_1").yarn_container_id)
    assert am.result(timeout_s=20) == 0 and g.app.final is not None and g.app.final[0] == "SUCCEEDED"
    got = [wire.Event.from_json(line) for line in out.read_text().splitlines()]
    assert [e.kind for e in got] == ["task_restart", "job_end"]
    assert (got[0].task, got[0].host) == ("worker:0", "node0") and "exit code 4" in got[0].message
    assert got[1].message == "job SUCCEEDED: all 1 worker task(s) succeeded (1 task restart(s))"
    assert [wire.Event.from_json(line) for line in Path(f"{out}.env").read_text().splitlines()] == got
    assert Path(f"{out}.app").read_text().split() == [g.app.id, g.app.id]
    final = wire.StatusDoc.from_json(g.app.kv[protocol.KV_STATUS])
    assert list(final.events) == got  # the final document has them too


def test_a_slow_hook_does_not_hold_up_the_loop(gang, tmp_path, monkeypatch):
    monkeypatch.setattr(events, "HOOK_TIMEOUT_S", 6.0)  # then it is killed, not left sleeping
    started, done = tmp_path / "started", tmp_path / "done"
    g = gang(
        fields={"on_event": f"touch {started}; sleep 20; touch {done}"},
        worker=RoleSpec("worker", 1, restart_policy="on-failure", restart_backoff_s=0),
    )
    am = g.run()
    g.app.allocate_all(NODES)
    g.wait_running()
    g.register("worker:0")
    g.exit("worker:0", 1)
    wait_until(started.exists, what="the hook's start")
    t0 = time.monotonic()
    wait_until(lambda: g.task("worker:0").container_id == "worker_1", what="the restart, while the hook sleeps")
    g.app.allocate("worker_1", NODES[0])
    wait_until(lambda: g.task("worker:0").state == TaskState.RUNNING)
    g.exit("worker:0", 0)
    assert am.result()[0] == "SUCCEEDED" and time.monotonic() - t0 < 5 and not done.exists()
    assert g.job.events.close(0.1) is False  # the hook still sleeps: close gave up waiting, as told
    wait_until(lambda: not g.job.events.hook._thread.is_alive(), timeout_s=15, what="the hook killed at its limit")
    assert not done.exists()


def test_a_failing_hook_is_a_warning_and_the_job_still_succeeds(gang, am_log):
    g = gang(
        fields={"on_event": "echo nope >&2; exit 7"},
        worker=RoleSpec("worker", 1, restart_policy="on-failure", restart_backoff_s=0),
    )
    am = g.run()
    g.app.allocate_all(NODES)
    g.wait_running()
    g.exit("worker:0", 1)
    wait_until(lambda: g.task("worker:0").container_id == "worker_1", what="the restart")
    g.app.allocate("worker_1", NODES[0])
    wait_until(lambda: g.task("worker:0").state == TaskState.RUNNING)
    g.exit("worker:0", 0)
    assert am.result()[0] == "SUCCEEDED"
    assert g.job.events.close() is True
    warned = [r for r in am_log.records if r.levelno == logging.WARNING and "--on-event" in r.getMessage()]
    assert [r.getMessage() for r in warned] == ["--on-event hook for task_restart exited with code 7"]


def test_a_hook_past_its_limit_is_killed_with_what_it_started(monkeypatch, am_log, tmp_path):
    monkeypatch.setattr(events, "HOOK_TIMEOUT_S", 1.0)
    marker = tmp_path / "finished"
    ev = events.Events(f"sleep 31.4159 & wait; touch {marker}", "application_1_0001")
    t0 = time.monotonic()
    ev.job_end("SUCCEEDED", "")
    assert ev.close(10) is True and time.monotonic() - t0 < 8
    assert "--on-event hook for job_end timed out after 1 s; killed it" in am_log.text
    time.sleep(0.2)
    left = subprocess.run(["pgrep", "-f", "sleep 31.4159"], capture_output=True, text=True).stdout
    assert left == "" and not marker.exists()


def test_a_hook_that_cannot_start_is_a_warning_and_the_rest_still_run(monkeypatch, am_log, tmp_path):
    out = tmp_path / "out"
    ev = events.Events(f"cat >> {out}; echo >> {out}")
    assert ev.hook is not None
    real = ev.hook.run
    calls: list[str] = []

    def flaky(event: wire.Event) -> None:
        calls.append(event.kind)
        if len(calls) == 1:
            raise OSError("no /bin/sh")
        real(event)

    monkeypatch.setattr(ev.hook, "run", flaky)
    ev.record("node_lost", "first")
    ev.job_end("FAILED", "why")
    assert ev.close(10) is True and calls == ["node_lost", "job_end"]
    assert [wire.Event.from_json(line).kind for line in out.read_text().splitlines()] == ["job_end"]
    assert "--on-event hook for node_lost could not run: OSError: no /bin/sh" in am_log.text


# --- the wire and the CLI --------------------------------------------------------------------------
def test_events_are_typed_on_the_wire_and_an_older_document_has_none():
    e = wire.Event(kind="job_end", time=5.0, message="job FAILED: x")
    doc = wire.StatusDoc(app_id="application_1_0001", state="FAILED", events=(e,))
    assert wire.StatusDoc.from_json(doc.to_json()).events == (e,)
    assert wire.StatusDoc.from_dict({"schema_version": 1, "app_id": "a", "state": "RUNNING"}).events == ()
    assert wire.StatusDoc.from_dict(
        {"app_id": "a", "state": "RUNNING", "events": [{"kind": "job_end", "time": 1}]}
    ).events == (wire.Event(kind="job_end", time=1.0),)
    with pytest.raises(wire.WireError, match=r"status document.events\[0\].time: expected a number"):
        wire.StatusDoc.from_dict({"app_id": "a", "state": "RUNNING", "events": [{"kind": "x", "time": "now"}]})
    with pytest.raises(wire.WireError, match=r"status document.events\[0\]: missing field 'kind'"):
        wire.StatusDoc.from_dict({"app_id": "a", "state": "RUNNING", "events": [{"time": 1}]})
    with pytest.raises(wire.WireError, match=r"status document.events: expected a list"):
        wire.StatusDoc.from_dict({"app_id": "a", "state": "RUNNING", "events": {}})


def test_the_docs_name_the_event_fields_in_order():
    text = STATUS_DOC_PAGE.read_text()
    section = text.split("## Status document (`--json`)\n", 1)[1].split("\n## ", 1)[0]
    para = " ".join(section.split("An event (`events[]`", 1)[1].split("\n\n", 1)[0].split())
    named = re.findall(r"`(\w+)` \(", para)
    assert named == list(wire.public_fields(wire.Event))
    assert "| `events` | list of event | AM |" in section


def test_status_shows_the_last_few_events(monkeypatch):
    import tfyarn.client
    from tfyarn.cli import jobs_cmd

    evs = tuple(
        wire.Event(
            kind="task_restart",
            time=1_700_000_000.0 + i,
            task="worker:0",
            host="node0",
            message=f"worker:0 failed (exit code {i}) on node0; restart {i + 1} in 2 s",
        )
        for i in range(7)
    )
    evs += (wire.Event(kind="job_end", time=1_700_000_100.0, message="job FAILED: task worker:0 failed\nstderr"),)
    doc = wire.StatusDoc(app_id="application_1_0001", state="FAILED", events=evs)
    report = JobReport(
        app_id="application_1_0001",
        name="demo",
        state=JobState.FAILED,
        yarn_state="FINISHED",
        final_status="FAILED",
        diagnostics="",
        tracking_url="http://rm/",
        queue="default",
        user="ann",
        start_time_ms=1,
        finish_time_ms=2,
        tags=(),
    )

    class Client:
        def __enter__(self) -> Client:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def report(self, app_id: str) -> JobReport:
            return report

        def status_doc(self, app_id: str) -> wire.StatusDoc:
            return doc

    monkeypatch.setattr(tfyarn.client, "Client", Client)
    res = CliRunner().invoke(jobs_cmd.status, ["application_1_0001"])
    assert res.exit_code == 0, res.output
    shown = res.output.split(f"Events (last {jobs_cmd.EVENTS_SHOWN} of 8; all in --json):\n", 1)[1].splitlines()
    assert len(shown) == jobs_cmd.EVENTS_SHOWN
    assert "task_restart" in shown[0] and "exit code 3" in shown[0]
    assert shown[-1].endswith("job_end      job FAILED: task worker:0 failed ...")
    printed = json.loads(CliRunner().invoke(jobs_cmd.status, ["--json", "application_1_0001"]).output)
    assert [e["kind"] for e in printed["events"]] == ["task_restart"] * 7 + ["job_end"]
