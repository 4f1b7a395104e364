"""The AM's /metrics: Prometheus text made from the status document, read back by Prometheus's parser."""

from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families

from appmaster.am import metrics
from appmaster.am.web import StatusServer
from tfyarn import protocol
from tfyarn.status import TaskState
from tfyarn.wire import GpuSample, StatusDoc, TaskStatus

APP = "application_1_0007"


def doc() -> StatusDoc:
    gpu = GpuSample(index=3, util_pct=87, mem_used_mib=1024, mem_total_mib=81559)
    return StatusDoc(
        app_id=APP, name='quote" and \\ back', framework="tensorflow", user="ann", queue="default",
        state="RUNNING", duration_s=12.5, job_restarts=1, attempt=2,
        tasks=(TaskStatus(name="chief:0", role="chief", index=0, state=TaskState.RUNNING, staging_s=1.5,
                          staging_bytes=4096, telemetry=(gpu,)),
               TaskStatus(name="worker:0", role="worker", index=0, state=TaskState.RUNNING, restarts=2),
               TaskStatus(name="worker:1", role="worker", index=1, state=TaskState.RESTARTING)))


def parsed(text: str) -> dict[str, list]:
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


def test_the_status_document_reads_back_through_prometheuss_parser():
    fams = parsed(metrics.render(doc()))
    tasks = {(s.labels["role"], s.labels["state"]): s.value for s in fams["tfyarn_tasks"]}
    assert len(tasks) == 2 * len(TaskState)  # every (role, state), zero included
    assert tasks[("worker", "RUNNING")] == 1 and tasks[("worker", "RESTARTING")] == 1
    assert tasks[("chief", "RUNNING")] == 1 and tasks[("chief", "FAILED")] == 0
    (info,) = fams["tfyarn_job_info"]
    assert info.labels["name"] == 'quote" and \\ back'  # escaped in the text, whole again after parsing
    assert [s.labels["state"] for s in fams["tfyarn_job_state"]] == ["RUNNING"]
    assert fams["tfyarn_job_restarts"][0].value == 1  # the parser drops a counter's _total
    assert {s.labels["task"]: s.value for s in fams["tfyarn_task_restarts"]} == {
        "chief:0": 0, "worker:0": 2, "worker:1": 0}
    assert [(s.labels["task"], s.value) for s in fams["tfyarn_task_staging_bytes"]] == [("chief:0", 4096)]
    assert [(s.labels["task"], s.value) for s in fams["tfyarn_task_staging_seconds"]] == [("chief:0", 1.5)]
    (util,) = fams["tfyarn_gpu_utilization_percent"]
    assert util.labels == {"app_id": APP, "task": "chief:0", "gpu": "3"} and util.value == 87
    assert fams["tfyarn_gpu_memory_used_bytes"][0].value == 1024 * 2**20
    assert all(s.labels["app_id"] == APP for samples in fams.values() for s in samples)


def test_the_ams_server_serves_it_as_prometheus_text():
    web = StatusServer("127.0.0.1")
    try:
        with urllib.request.urlopen(f"{web.url}/{protocol.API_METRICS}", timeout=5) as resp:
            assert resp.read() == b""  # before the AM's first document: no samples, not an error
        web.update(doc())
        with urllib.request.urlopen(f"{web.url}/{protocol.API_METRICS}", timeout=5) as resp:
            assert resp.headers["Content-Type"] == metrics.CONTENT_TYPE
            assert parsed(resp.read().decode())["tfyarn_am_attempt"][0].value == 2
        with urllib.request.urlopen(f"{web.url}/", timeout=5) as resp:
            assert f'href="{protocol.API_METRICS}"' in resp.read().decode()  # linked from the page
    finally:
        web.close()
