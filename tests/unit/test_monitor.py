"""What the user's script writes to $TFYARN_EVENTS cannot break the status document or page."""
from __future__ import annotations

import json
import threading
import time

from appmaster.am import page
from appmaster.executor import main as executor
from appmaster.executor.monitor import parse_event
from tests.unit.test_page import doc, task
from tfyarn.taskenv import StagingPlan


def test_sane_events_are_taken_and_broken_ones_skipped():
    now = time.time()
    assert parse_event(json.dumps({"stage": "first_step", "time": now})) == ("first_step", now)
    for bad in ('{"stage": "first_step", "time": Infinity}', '{"stage": "first_step", "time": NaN}',
                '{"stage": "first_step", "time": 1e308}', '{"stage": "first_step", "time": -5}',
                json.dumps({"stage": "x" * 1000, "time": now}), json.dumps({"stage": "a\nb", "time": now}),
                json.dumps({"stage": 7, "time": now}), '{"stage": "s"', "[]", '{"time": 1}'):
        assert parse_event(bad) is None, bad


def test_the_page_renders_a_document_with_an_unrepresentable_time():
    d = doc(tasks=(task(timeline={"allocated": 101.0, "first_step": float("inf")}),), time=1e308)
    html = page.render(d)
    assert "first_step" in html and "worker:0" in html


class _DeadStream:
    """skein's event queue after its stream failed: every get() raises at once."""

    def __init__(self) -> None:
        self.calls = 0

    def get(self, timeout: float | None = None) -> None:
        self.calls += 1
        raise RuntimeError("stream closed")


class _App:
    def __init__(self, stream: _DeadStream):
        self.kv, self.id, self.stream = self, "application_1_0001", stream

    def events(self, **_: object) -> _DeadStream:
        return self.stream


def test_a_failed_save_stream_does_not_spin(monkeypatch, tmp_path):
    """It once re-raised forever: a hot loop of snapshot uploads once the AM connection dropped."""
    published = []
    monkeypatch.setattr(executor, "publish_snapshot", lambda *a: published.append(1) or [])
    stream = _DeadStream()
    plan = StagingPlan(outputs=({"src": "model", "dest": "hdfs:///m"},), save_every=0)
    worker = threading.Thread(target=executor.snapshots, args=(_App(stream), plan, str(tmp_path), "worker", 0),
                              daemon=True)
    worker.start()
    worker.join(timeout=2)
    assert not worker.is_alive() and stream.calls == 1 and published == []
