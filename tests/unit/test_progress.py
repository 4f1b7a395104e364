"""Heartbeats and metrics from a training script: the executor's log of them, the wire record, the page,
the Prometheus text. (The watchdog that reads them: test_watchdog.py.)"""
from __future__ import annotations

import json
import re
import time

from prometheus_client.parser import text_string_to_metric_families

from appmaster.am import metrics, page
from appmaster.executor.monitor import METRICS_MAX, SERIES_MAX, ProgressLog
from tests.unit.test_page import doc, task
from tfyarn import wire
from tfyarn.wire import Progress, ProgressRecord, StatusDoc


def test_the_log_keeps_the_newest_step_values_and_a_bounded_series():
    log = ProgressLog()
    assert log.take() is None  # nothing yet
    for step in range(100):
        log.add({"progress": True, "step": step, "metrics": {"loss": 1.0 / (step + 1), "acc": step / 100}})
    log.add({"progress": True, "metrics": {"loss": float("inf"), "bad": "x", "flag": True}})  # dropped values
    got = log.take()
    assert got is not None and got.step == 99
    assert got.metrics == {"loss": 1.0 / 100, "acc": 0.99}
    assert len(got.series["loss"]) == SERIES_MAX and got.series["loss"][-1] == 1.0 / 100
    assert log.take() is None  # nothing new since


def test_a_script_that_names_a_metric_per_step_cannot_grow_the_record():
    log = ProgressLog()
    for i in range(1000):
        log.add({"progress": True, "metrics": {f"m{i}": 1.0}})
    got = log.take()
    assert got is not None and len(got.metrics) == METRICS_MAX


def test_the_record_round_trips_and_a_status_doc_without_progress_still_reads():
    p = Progress(time=123.5, step=7, metrics={"loss": 0.25}, series={"loss": (0.5, 0.25)})
    record = ProgressRecord(progress=p, container="container_1")
    assert ProgressRecord.from_json(record.to_json()) == record
    d = doc(tasks=(task(progress=p),))
    assert StatusDoc.from_json(d.to_json()) == d
    old = json.loads(doc().to_json())
    for t in old["tasks"]:
        t.pop("progress")  # written by a tfyarn before progress existed
    assert StatusDoc.from_dict(old).tasks[0].progress is None
    assert wire.TaskRecords.read({"tfyarn/progress/worker:0": record.to_json().encode()}, "worker", 0,
                                 "container_1").progress == record
    assert wire.TaskRecords.read({"tfyarn/progress/worker:0": record.to_json().encode()}, "worker", 0,
                                 "container_2").progress is None  # a replaced container's


def test_the_page_shows_the_step_its_age_and_each_metric_with_a_sparkline():
    p = Progress(time=104.0, step=1200, metrics={"loss": 0.3125}, series={"loss": (0.9, 0.5, 0.3125)})
    html = page.render(doc(tasks=(task(progress=p),), time=110.0))
    row = re.search(r'<tr class="task" data-task="worker:0">(.*?)</tr>', html).group(1)
    assert '<td class="progress">step 1200 <span class="muted">6.0s ago</span></td>' in row
    metric = re.search(r'<tr class="metric">(.*?)</tr>', html).group(1)
    assert "<td>worker:0</td><td>loss</td><td>0.3125</td>" in metric
    points = re.search(r'<polyline [^>]*points="([^"]+)"', metric).group(1).split()
    assert len(points) == 3 and points[0].endswith(",2.0") and points[-1].endswith(",22.0")  # high, then low


def test_without_heartbeats_the_page_has_no_metrics_table():
    html = page.render(doc())
    assert 'id="metrics-table"' not in html and '<td class="muted">-</td>' in html


def test_prometheus_has_each_tasks_step_metrics_and_last_progress():
    p = Progress(time=104.0, step=12, metrics={"loss": 0.5, "val_loss": 0.75})
    families = {f.name: f.samples for f in text_string_to_metric_families(metrics.render(doc(tasks=(task(progress=p),))))}
    assert [(s.labels["metric"], s.value) for s in families["tfyarn_task_metric"]] == [("loss", 0.5), ("val_loss", 0.75)]
    assert [s.value for s in families["tfyarn_task_step"]] == [12]
    assert [s.value for s in families["tfyarn_task_last_progress_timestamp_seconds"]] == [104.0]


def test_the_monitor_forwards_heartbeats_to_the_key_value_store_and_tells_the_watchdog(tmp_path, monkeypatch):
    from appmaster.executor.monitor import Monitor, Timeline
    from tests.fakes import FakeApp
    from tfyarn import protocol

    monkeypatch.setenv(protocol.ENV_YARN_CONTAINER_ID, "container_1_0001_01_000002")
    app = FakeApp()
    events = tmp_path / "events"
    events.write_text(json.dumps({"stage": "first_step", "time": time.time()}) + "\n")
    monitor = Monitor(app, "worker", 1, Timeline(app, "worker", 1), str(events), [])
    monitor._forward_events()
    assert (monitor.heartbeats, monitor.last_report_what) == (False, "tfyarn.report.first_step()")
    monitor._publish_progress()
    assert protocol.kv_task_progress("worker", 1) not in app.kv  # no heartbeat yet: nothing to publish
    with events.open("a") as f:
        f.write(json.dumps({"progress": True, "time": 1.0e9, "step": 42, "metrics": {"loss": 0.25}}) + "\n")
        f.write('{"progress": true, "step": 4')  # torn: the script is still writing it
    monitor._forward_events()
    assert monitor.heartbeats and monitor.last_report_what == "tfyarn.report.progress() at step 42"
    monitor._publish_progress()
    record = ProgressRecord.from_json(app.kv[protocol.kv_task_progress("worker", 1)])
    assert (record.progress.step, record.progress.metrics, record.container) == (
        42, {"loss": 0.25}, "container_1_0001_01_000002")
    with events.open("a") as f:
        f.write('3}\n')  # the torn line, finished: read whole, once
    monitor._forward_events()
    assert monitor.last_report_what == "tfyarn.report.progress() at step 43"
