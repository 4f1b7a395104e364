"""The job's status as Prometheus text (the AM's /metrics): one scrape target per job, no client library.

Made from the same status document the page shows, so a scrape never
touches the AM's loop. Every (role, state) pair is present, zero included,
so a rate or an alert on a state sees the series before the first task
gets there.
"""

from __future__ import annotations

from collections.abc import Iterable

from tfyarn.status import TaskState
from tfyarn.wire import StatusDoc

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
Sample = tuple[dict[str, str], float]


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _value(v: float) -> str:
    """Exact: %g would round a byte count to six digits."""
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _family(name: str, kind: str, help_: str, samples: Iterable[Sample]) -> list[str]:
    lines = [f"# HELP {name} {help_}", f"# TYPE {name} {kind}"]
    for labels, value in samples:
        inner = ",".join(f'{k}="{_label(v)}"' for k, v in labels.items())
        lines.append(f"{name}{{{inner}}} {_value(value)}" if inner else f"{name} {_value(value)}")
    return lines


def render(doc: StatusDoc) -> str:
    """The exposition text of ``doc``."""
    job = {"app_id": doc.app_id}
    roles = sorted({t.role for t in doc.tasks})
    counts = {(r, s.value): 0 for r in roles for s in TaskState}
    for t in doc.tasks:
        counts[(t.role, t.state.value)] += 1
    out: list[str] = []
    out += _family(
        "tfyarn_job_info",
        "gauge",
        "The job: name, framework, user, queue (value 1).",
        [({**job, "name": doc.name, "framework": doc.framework, "user": doc.user, "queue": doc.queue}, 1)],
    )
    out += _family(
        "tfyarn_job_state",
        "gauge",
        "1 for the job's state now (STARTING, RUNNING, then its final status).",
        [({**job, "state": doc.state}, 1)],
    )
    out += _family(
        "tfyarn_job_duration_seconds", "gauge", "The job's duration so far, in seconds.", [(job, doc.duration_s)]
    )
    out += _family(
        "tfyarn_job_restarts_total",
        "counter",
        "Restarts of the whole job (restart policy all).",
        [(job, doc.job_restarts)],
    )
    if doc.elastic:
        out += _family(
            "tfyarn_elastic_world_size",
            "gauge",
            "Elastic jobs: containers in the newest rendezvous round (0 before the first).",
            [(job, doc.world_size)],
        )
    out += _family("tfyarn_am_attempt", "gauge", "The ApplicationMaster's attempt number.", [(job, doc.attempt)])
    out += _family(
        "tfyarn_tasks",
        "gauge",
        "Tasks by role and state.",
        [({**job, "role": r, "state": s}, n) for (r, s), n in counts.items()],
    )
    out += _family(
        "tfyarn_task_restarts_total",
        "counter",
        "Restarts of each task.",
        [({**job, "task": t.name, "role": t.role}, t.restarts) for t in doc.tasks],
    )
    staged = [t for t in doc.tasks if t.staging_s is not None]
    out += _family(
        "tfyarn_task_staging_seconds",
        "gauge",
        "Seconds the task's --input took to download.",
        [({**job, "task": t.name}, t.staging_s or 0.0) for t in staged],
    )
    out += _family(
        "tfyarn_task_staging_bytes",
        "gauge",
        "Bytes of the task's --input.",
        [({**job, "task": t.name}, t.staging_bytes or 0) for t in staged if t.staging_bytes is not None],
    )
    beating = [(t, t.progress) for t in doc.tasks if t.progress]
    out += _family(
        "tfyarn_task_last_progress_timestamp_seconds",
        "gauge",
        "When the task's script last reported progress (tfyarn.report), epoch seconds.",
        [({**job, "task": t.name}, p.time) for t, p in beating],
    )
    out += _family(
        "tfyarn_task_step",
        "gauge",
        "The training step the task's script last reported.",
        [({**job, "task": t.name}, p.step) for t, p in beating if p.step is not None],
    )
    out += _family(
        "tfyarn_task_metric",
        "gauge",
        "The newest value of each metric the task's script reported (tfyarn.report.metric).",
        [({**job, "task": t.name, "metric": name}, v) for t, p in beating for name, v in p.metrics.items()],
    )
    gpus = [(t, g) for t in doc.tasks for g in t.telemetry]
    out += _family(
        "tfyarn_gpu_utilization_percent",
        "gauge",
        "GPU utilisation of a task's bound device (NVML).",
        [({**job, "task": t.name, "gpu": str(g.index)}, g.util_pct) for t, g in gpus],
    )
    out += _family(
        "tfyarn_gpu_memory_used_bytes",
        "gauge",
        "GPU memory in use on a task's bound device.",
        [({**job, "task": t.name, "gpu": str(g.index)}, g.mem_used_mib * 2**20) for t, g in gpus],
    )
    out += _family(
        "tfyarn_gpu_memory_total_bytes",
        "gauge",
        "GPU memory of a task's bound device.",
        [({**job, "task": t.name, "gpu": str(g.index)}, g.mem_total_mib * 2**20) for t, g in gpus],
    )
    return "\n".join(out) + "\n"
