"""`tfyarn save` by a --modify-acl user: the AM's signal, its `save` events, the client's way through the RM.

The RM's side (its modify-ACL check, the NodeManager's signal to the AM's container) runs in
tests/integration/test_staging.py and tests/kerberos/test_kerberos.py; here the pure parts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from appmaster.am import events
from tfyarn import credentials, protocol, saveclient, wire
from tfyarn.errors import TfyarnError
from tfyarn.rest import Unreadable
from tfyarn.status import JobReport, JobState

APP = "application_1796000000000_0007"
AM_CID = "container_1796000000000_0007_02_000001"


# As the AM runs it: block() first, threads after (they inherit the mask), signals to the whole process.
_AM_LIKE = """
import os, signal, sys, threading, time
from appmaster.am import saverequest
saverequest.block()
threading.Thread(target=time.sleep, args=(5,), daemon=True).start()  # the AM's threads start after block()
print(saverequest.taken())
os.kill(os.getpid(), signal.SIGQUIT)
os.kill(os.getpid(), signal.SIGQUIT)  # two signals before a poll: one request
time.sleep(0.2)
print(saverequest.taken(), saverequest.taken())
os.kill(os.getpid(), signal.SIGQUIT)
time.sleep(0.2)
print(saverequest.taken())
"""


def test_a_blocked_sigquit_is_one_request_and_never_ends_the_process():
    res = subprocess.run([sys.executable, "-c", _AM_LIKE], capture_output=True, text=True, timeout=60)
    assert (res.returncode, res.stdout.split()) == (0, ["False", "True", "False", "True"]), res.stderr


def snapshot(uris: tuple[str, ...], at: float) -> bytes:
    return wire.SnapshotRecord(uris=uris, time=at).to_json().encode()


def test_save_events_are_the_request_and_each_tasks_first_snapshot_after_it():
    ev = events.Events()
    kv = {protocol.kv_task_snapshot("worker", 0): snapshot(("hdfs:///o.snapshots/a",), 90.0)}
    ev.saves(kv, {"worker:0": "node1"})
    assert ev.recent() == ()  # a timer's snapshot, no request: not an event
    kv[protocol.KV_SAVE] = b"100.5"
    ev.saves(kv, {})
    assert [e.message for e in ev.recent()] == ["a snapshot of the outputs was asked for (tfyarn save)"]
    kv[protocol.kv_task_snapshot("worker", 0)] = snapshot(("hdfs:///o.snapshots/b", "hdfs:///p.snapshots/b"), 101.0)
    kv[protocol.kv_task_snapshot("chief", 0)] = b"{not json"
    ev.saves(kv, {"worker:0": "node1"})
    ev.saves(kv, {"worker:0": "node1"})  # the next poll sees the same records
    kv[protocol.kv_task_snapshot("worker", 0)] = snapshot(("hdfs:///o.snapshots/c",), 130.0)  # the timer's next
    ev.saves(kv, {"worker:0": "node1"})
    got = [(e.kind, e.task, e.host, e.message) for e in ev.recent()]
    assert got[1:] == [
        ("save", "worker:0", "node1", "worker:0 published a snapshot: hdfs:///o.snapshots/b hdfs:///p.snapshots/b"),
        ("save", "chief:0", "", got[2][3]),
    ] and "unreadable snapshot record of chief:0" in got[2][3]
    assert protocol.save_event_uris(got[1][3]) == ["hdfs:///o.snapshots/b", "hdfs:///p.snapshots/b"]
    assert protocol.save_event_uris("worker:0 failed (exit code 3)") == []


def test_the_am_container_is_the_newest_attempts():
    answer = {"appAttempts": {"appAttempt": [{"id": 1, "containerId": "container_1796000000000_0007_01_000001"},
                                             {"id": 2, "containerId": AM_CID}]}}
    assert saveclient.am_container(json.dumps(answer).encode(), APP) == AM_CID
    hidden = {"appAttempts": {"appAttempt": [{"id": 1, "containerId": ""}, {"id": 2}]}}  # outside the view ACL
    assert saveclient.am_container(json.dumps(hidden).encode(), APP) == AM_CID
    bad_ones = ({}, {"appAttempts": {"appAttempt": []}}, {"appAttempts": {"appAttempt": [{"id": 1, "containerId": 7}]}})
    for bad in bad_ones:
        with pytest.raises(Unreadable):
            saveclient.am_container(json.dumps(bad).encode(), APP)


def report(state: JobState = JobState.RUNNING, user: str = "alice") -> JobReport:
    return JobReport(APP, "shared", state, state.value, "UNDEFINED", "", "http://rm/proxy/x/", "default", user, 0, 0)


def doc(*evs: wire.Event) -> wire.StatusDoc:
    return wire.StatusDoc(app_id=APP, name="shared", state="RUNNING", time=0.0, events=evs)


class FakeClient:
    """The RM's answers as tfyarn.client.Client hands them over; the docs the status page serves in turn."""

    def __init__(self, docs: list[wire.StatusDoc | None]):
        self.docs = docs
        self.kv_saves = 0

    def report(self, app_id: str) -> JobReport:
        return report()

    def rm_rest(self, path: str, method: str = "GET") -> tuple[str, bytes]:
        assert (path, method) == (f"/ws/v1/cluster/apps/{APP}/appattempts", "GET")
        return path, json.dumps({"appAttempts": {"appAttempt": [{"id": 2, "containerId": AM_CID}]}}).encode()

    def live_doc(self, rep: JobReport) -> wire.StatusDoc | None:
        return self.docs.pop(0) if len(self.docs) > 1 else self.docs[0]

    def save(self, app_id: str, timeout_s: float, progress: Any) -> list[str]:
        self.kv_saves += 1
        return ["hdfs:///mine.snapshots/x"]


DENIED = ('Exception in thread "main" org.apache.hadoop.yarn.exceptions.YarnException: '
          "java.security.AccessControlException: User bob cannot perform operation MODIFY_APP on " + APP)


@pytest.fixture
def signalled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """`yarn container -signal`'s calls (the container ids); each answers "" (done)."""
    calls: list[str] = []
    monkeypatch.setattr(saveclient, "signal_am", lambda cid: calls.append(cid) or "")
    return calls


@pytest.fixture
def bob(monkeypatch: pytest.MonkeyPatch, signalled: list[str]) -> list[str]:
    monkeypatch.setattr(credentials, "user_name", lambda *a: "bob")
    monkeypatch.setattr(saveclient, "POLL_S", 0.0)
    return signalled


def test_the_owner_saves_through_the_jobs_store(monkeypatch, signalled):
    monkeypatch.setattr(credentials, "user_name", lambda *a: "alice")
    c = FakeClient([None])
    assert saveclient.save(c, APP, 5, print) == ["hdfs:///mine.snapshots/x"]
    assert c.kv_saves == 1 and signalled == []


def test_another_user_saves_through_the_rm_signal_and_reads_the_uris_from_the_page(bob):
    old = wire.Event(kind="save", time=1.0, task="worker:0", message="worker:0 published a snapshot: hdfs:///old")
    new = wire.Event(kind="save", time=9.0, task="worker:0", message="worker:0 published a snapshot: hdfs:///new")
    asked = wire.Event(kind="save", time=8.0, message="a snapshot of the outputs was asked for (tfyarn save)")
    c = FakeClient([doc(old), doc(old), doc(old, asked), doc(old, asked, new)])
    said: list[str] = []
    assert saveclient.save(c, APP, 5, said.append) == ["hdfs:///new"]
    assert bob == [AM_CID] and c.kv_saves == 0
    assert "through YARN" in said[0]


def test_a_user_yarn_refuses_is_told_who_may(bob, monkeypatch):
    monkeypatch.setattr(saveclient, "signal_am", lambda cid: DENIED)
    c = FakeClient([None])
    with pytest.raises(TfyarnError, match=r"only its owner \(alice\) and the users its --modify-acl names can save "
                                          r"it, and you are bob"):
        saveclient.save(c, APP, 5, print)


def test_without_the_view_acl_the_save_is_sent_and_the_user_told_where_to_look(bob, monkeypatch):
    monkeypatch.setattr(saveclient, "UNSEEN_AFTER_S", 0.0)
    said: list[str] = []
    assert saveclient.save(FakeClient([None]), APP, 5, said.append) == []
    assert "is not open to you (its --view-acl)" in said[-1]


def test_an_ended_job_is_refused_before_anything_is_sent(bob, monkeypatch):
    c = FakeClient([None])
    monkeypatch.setattr(c, "report", lambda app_id: report(JobState.SUCCEEDED))
    with pytest.raises(TfyarnError, match="has ended"):
        saveclient.save(c, APP, 5, print)
    assert bob == [] and c.kv_saves == 0


def test_any_other_failure_of_the_signal_is_passed_on_as_yarn_said_it(bob, monkeypatch):
    monkeypatch.setattr(saveclient, "signal_am", lambda cid: "java.net.ConnectException: Connection refused")
    with pytest.raises(TfyarnError, match="did not pass the save to .*: java.net.ConnectException"):
        saveclient.save(FakeClient([None]), APP, 5, print)
