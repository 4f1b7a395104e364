"""The status page: one pure function from the typed status document (tfyarn.wire) to HTML.

Server-rendered, no JavaScript, no external assets (clusters are often
offline); a meta refresh keeps it live. Every value is escaped. Links are
relative, so the page works behind the ResourceManager's proxy at
``<tracking URL>pages/tfyarn/``.
"""

from __future__ import annotations

import time
from html import escape
from typing import Any

from appmaster.am import gantt
from tfyarn import protocol
from tfyarn.wire import StatusDoc, TaskStatus

REFRESH_S = 5
_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.1em;margin:1.4em 0 .4em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}.RUNNING{color:#0a58ca}.SUCCEEDED{color:#157347}.FAILED,.KILLED{color:#b02a37}
.muted{color:#777}pre{background:#f8f8f8;padding:.5em;white-space:pre-wrap}
"""


def _t(epoch: float | None) -> str:
    """HH:MM:SS.d, or "-" for a missing or unrepresentable time (the page must render whatever comes)."""
    try:
        return time.strftime("%H:%M:%S", time.localtime(epoch)) + f".{int((epoch % 1) * 10)}" if epoch else "-"
    except (OverflowError, ValueError, OSError, TypeError):
        return "-"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    m, s = divmod(int(seconds), 60)
    return f"{m}m {s:02d}s" if m else f"{seconds:.1f}s"


def _cell(value: Any) -> str:
    return f"<td>{escape(str(value))}</td>" if value not in (None, "") else '<td class="muted">-</td>'


def _gpu_cell(task: TaskStatus) -> str:
    if not task.gpus_asked:
        return '<td class="muted">none</td>'
    devices = ",".join(str(d) for d in task.gpus)
    usage = "; ".join(f"{g.index}: {g.util_pct}% {g.mem_used_mib}/{g.mem_total_mib} MiB" for g in task.telemetry)
    text = f"{devices or 'pending'} ({task.gpu_binding or '?'})"
    return f"<td>{escape(text)}" + (f'<br><span class="muted">{escape(usage)}</span>' if usage else "") + "</td>"


def _logs_cell(task: TaskStatus) -> str:
    if not task.log_url:
        return '<td class="muted">-</td>'
    return (
        f'<td><a href="{escape(task.log_url)}">{escape(task.role)}.log</a> · '
        f'<a href="{escape(task.logs_dir_url)}">all files</a></td>'
    )


def _progress_cell(task: TaskStatus, now: float) -> str:
    """The script's last heartbeat: its step and how long ago (what --progress-timeout watches)."""
    p = task.progress
    if p is None:
        return '<td class="muted">-</td>'
    step = f"step {p.step}" if p.step is not None else "heartbeat"
    return (
        f'<td class="progress">{escape(step)} <span class="muted">{_duration(max(0.0, now - p.time))} ago</span></td>'
    )


def sparkline(values: tuple[float, ...], width: int = 120, height: int = 24) -> str:
    """An inline SVG polyline of ``values`` (no script, no external asset)."""
    if len(values) < 2:
        return ""
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    step = width / (len(values) - 1)
    points = " ".join(
        f"{i * step:.1f},{height - 2 - (v - low) / span * (height - 4):.1f}" for i, v in enumerate(values)
    )
    return (
        f'<svg class="spark" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f'<polyline fill="none" stroke="#0a58ca" stroke-width="1.5" points="{points}"/></svg>'
    )


def metric_rows(doc: StatusDoc) -> list[str]:
    """One table row per (task, metric) the scripts reported: its newest value and recent trend."""
    rows = []
    for t in doc.tasks:
        for name, value in t.progress.metrics.items() if t.progress else ():
            series = t.progress.series.get(name, ()) if t.progress else ()
            rows.append(
                f'<tr class="metric">{_cell(t.name)}{_cell(name)}<td>{value:.6g}</td><td>{sparkline(series)}</td></tr>'
            )
    return rows


def timeline_rows(doc: StatusDoc) -> list[tuple[float, str, str]]:
    """(time, stage, task or "job") for every stamped stage, in time order."""
    rows = [(t, stage, "job") for stage, t in doc.timeline.items() if t]
    for task in doc.tasks:
        rows += [(t, stage, task.name) for stage, t in task.timeline.items() if t]
    order = {s: i for i, s in enumerate(protocol.STAGES)}
    return sorted(rows, key=lambda r: (r[0], order.get(r[1], 99)))


def render(doc: StatusDoc) -> str:
    """The page for ``doc``."""
    state = doc.state
    origin = doc.timeline.get("submitted")
    head = f'<meta charset="utf-8"><title>{escape(doc.name)} · tfyarn</title><style>{_CSS}</style>'
    if state in ("RUNNING", "STARTING"):
        head += f'<meta http-equiv="refresh" content="{REFRESH_S}">'
    out = [
        f"<!doctype html><html><head>{head}</head><body>",
        f'<h1>{escape(doc.name)} <span class="{escape(state)}">{escape(state)}</span></h1>',
        '<table id="job">',
    ]
    tb = doc.tensorboard
    job_rows = [
        ("Application", doc.app_id),
        ("Framework", doc.framework),
        ("User", doc.user),
        ("Queue", doc.queue),
        ("Started", _t(origin)),
        ("Duration", _duration(doc.duration_s)),
        ("Diagnostics", doc.diagnostics),
    ]
    if doc.elastic:
        size = str(doc.world_size) if doc.world_size else "not yet formed"
        job_rows.insert(4, ("World size", f"{size} (elastic workers {doc.elastic})"))
    out += [f"<tr><th>{k}</th>{_cell(v)}</tr>" for k, v in job_rows]
    if tb:
        link = (
            f'<a id="tensorboard" href="../{protocol.UI_TENSORBOARD_ROUTE}/">TensorBoard</a>'
            if tb.state == "running"
            else escape(tb.state)
        )
        out.append(f'<tr><th>TensorBoard</th><td>{link} <span class="muted">{escape(tb.uri)}</span></td></tr>')
    out.append(f'<tr><th>JSON</th><td><a href="{protocol.API_STATUS}">{protocol.API_STATUS}</a></td></tr>')
    metrics = protocol.API_METRICS
    out.append(f'<tr><th>Prometheus</th><td><a id="metrics" href="{metrics}">{metrics}</a></td></tr></table>')

    out.append(
        '<h2>Tasks</h2><table id="tasks"><tr><th>Task</th><th>Host</th><th>Container</th><th>State</th>'
        "<th>Restarts</th><th>Exit code</th><th>GPUs</th><th>Staging</th><th>Progress</th><th>Logs</th></tr>"
    )
    for t in doc.tasks:
        staging = f"{t.staging_s:.1f}s" if t.staging_s is not None else None
        out.append(
            f'<tr class="task" data-task="{escape(t.name)}">{_cell(t.name)}{_cell(t.host)}'
            f'{_cell(t.yarn_container_id)}<td class="state {escape(t.state.value)}">'
            f"{escape(t.state.value)}</td>{_cell(t.restarts)}{_cell(t.exit_code)}"
            f"{_gpu_cell(t)}{_cell(staging)}{_progress_cell(t, doc.time)}{_logs_cell(t)}</tr>"
        )
    out.append("</table>")
    if rows := metric_rows(doc):
        out.append(
            '<h2>Metrics</h2><table id="metrics-table">'
            "<tr><th>Task</th><th>Metric</th><th>Last</th><th>Recent</th></tr>"
        )
        out += rows
        out.append("</table>")

    out.append(f"<h2>Startup timeline</h2>{gantt.render(doc)}")
    out.append(
        '<details><summary>Every stage, in time order</summary><table id="timeline">'
        "<tr><th>Time</th><th>+s</th><th>Stage</th><th>Task</th></tr>"
    )
    for when, stage, who in timeline_rows(doc):
        offset = f"{when - origin:.1f}" if origin else "-"
        out.append(f"<tr><td>{_t(when)}</td><td>{offset}</td><td>{escape(stage)}</td><td>{escape(who)}</td></tr>")
    out.append("</table></details>")
    for t in doc.tasks:
        if t.stderr_tail:
            out.append(f"<h2>{escape(t.name)}: end of stderr</h2><pre>{escape(t.stderr_tail)}</pre>")
    out.append(f'<p class="muted">Updated {_t(doc.time)}.</p></body></html>')
    return "\n".join(out)
