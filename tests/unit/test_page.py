"""The status page and --wait progress: pure renderings of the typed status document (tfyarn.wire)."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from appmaster.am import page
from tfyarn.cli.submit_cmd import progress_line
from tfyarn.status import TaskState
from tfyarn.wire import GpuSample, StatusDoc, TaskStatus, TensorBoardStatus


def task(**over: Any) -> TaskStatus:
    t = TaskStatus(name="worker:0", role="worker", index=0, state=TaskState.RUNNING, host="node-1",
                   node_http_address="node-1:8042", yarn_container_id="container_1_0001_01_000002",
                   address="node-1:4000", restarts=1, gpus_asked=2, gpus=(1, 3), gpu_binding="tfyarn",
                   staging_s=2.25, timeline={"allocated": 101.0, "registered": 103.0},
                   telemetry=(GpuSample(index=1, util_pct=87, mem_used_mib=900, mem_total_mib=16000),),
                   log_url="http://node-1:8042/node/containerlogs/c/u/worker.log",
                   logs_dir_url="http://node-1:8042/x")
    return replace(t, **over)


def doc(**over: Any) -> StatusDoc:
    d = StatusDoc(app_id="application_1_0001", name="demo", framework="pytorch", user="ann", queue="q",
                  state="RUNNING", time=110.0, duration_s=10.0,
                  timeline={"submitted": 100.0, "am_started": 100.5, "rendezvous": 103.5},
                  tasks=(task(),), tensorboard=TensorBoardStatus(state="running", uri="hdfs:///tb"))
    return replace(d, **over)


def test_page_lists_each_task_with_host_state_gpus_and_logs():
    html = page.render(doc())
    row = re.search(r'<tr class="task" data-task="worker:0">(.*?)</tr>', html).group(1)
    assert "node-1" in row and "RUNNING" in row and "1,3 (tfyarn)" in row and "87%" in row
    assert 'href="http://node-1:8042/node/containerlogs/c/u/worker.log"' in row
    assert '<a id="tensorboard" href="../tensorboard/">' in html
    assert '<meta http-equiv="refresh"' in html  # live while running


def test_page_escapes_values_and_stops_refreshing_when_done():
    html = page.render(doc(name="<script>alert(1)</script>", state="FAILED", diagnostics="a < b"))
    assert "<script>" not in html and "&lt;script&gt;" in html and "a &lt; b" in html
    assert "http-equiv" not in html


def test_timeline_rows_are_in_time_order_with_offsets():
    rows = page.timeline_rows(doc())
    assert [r[1] for r in rows] == ["submitted", "am_started", "allocated", "registered", "rendezvous"]
    assert "+s" in page.render(doc()) and "<td>3.5</td>" in page.render(doc())


def test_tensorboard_that_failed_is_shown_not_linked():
    html = page.render(doc(tensorboard=TensorBoardStatus(state="failed: no module named tensorboard", uri="u")))
    assert 'id="tensorboard"' not in html and "failed: no module named tensorboard" in html


def test_progress_line_counts_containers_then_training():
    d = doc(tasks=(task(address=""), task(yarn_container_id="", address="")), timeline={})
    assert progress_line("RUNNING", d, 3) == "RUNNING: containers 1/3 allocated, 0/3 registered"
    assert progress_line("ACCEPTED", None, 3) == "ACCEPTED"
    assert progress_line("RUNNING", doc(), 1).endswith("; training (0/1 task(s) ended)")
    ended = doc(tasks=(task(state=TaskState.SUCCEEDED), task(state=TaskState.RESTARTING)))
    assert progress_line("RUNNING", ended, 2).endswith("; training (1/2 task(s) ended)")


def test_the_page_shows_a_failed_tasks_stderr_and_its_exit_code():
    html = page.render(doc(state="FAILED", tasks=(task(state=TaskState.FAILED, exit_code=3,
                                                       stderr_tail="ValueError: <bad>"),)))
    row = re.search(r'<tr class="task" data-task="worker:0">(.*?)</tr>', html).group(1)
    assert '<td class="state FAILED">FAILED</td>' in row and "<td>3</td>" in row
    assert "<h2>worker:0: end of stderr</h2><pre>ValueError: &lt;bad&gt;</pre>" in html


def test_the_page_renders_the_document_read_back_from_its_json_the_same():
    assert page.render(StatusDoc.from_json(doc().to_json())) == page.render(doc())
