"""The startup timeline as a picture: one row per task, a bar per phase, restarts marked.

A table of tasks x stages (36 rows for a 4-task job) makes a reader do the
subtraction; a Gantt chart shows at a glance which task waited on what.
Inline SVG made here, on the server: no JavaScript, no external assets;
every bar has a <title> with its exact seconds. A pure function of the
status document, so the live page and a saved status.json draw the same.
"""

from __future__ import annotations

import math
from html import escape

from tfyarn.status import TaskState
from tfyarn.wire import StatusDoc

# (from stage, to stage, phase): each task's bars, in order. "rendezvous" is the task's own stamp
# (it got the cluster view), so "gang" is how long it waited for the others.
PHASES = (
    ("allocated", "localized", "localizing"),
    ("localized", "inputs_staged", "staging"),
    ("inputs_staged", "registered", "registering"),
    ("registered", "rendezvous", "gang"),
    ("rendezvous", "process_started", "starting"),
    ("process_started", "first_step", "first step"),
)
TRAINING = "training"  # first_step (else process_started) to now, while the task runs
COLORS = {
    "AM start": "#adb5bd",
    "localizing": "#6f42c1",
    "staging": "#fd7e14",
    "registering": "#20c997",
    "gang": "#ffc107",
    "starting": "#0dcaf0",
    "first step": "#0a58ca",
    TRAINING: "#198754",
}
LABEL_W, CHART_W, ROW_H, BAR_H, AXIS_H, LEGEND_H = 110, 640, 16, 10, 22, 22
_SANE_S = 30 * 86400  # a stamp further than this from the job's start is a broken clock: not drawn


def _tick_step(span_s: float) -> float:
    """A round tick interval giving at most about 10 ticks over ``span_s``."""
    raw = max(span_s / 10, 0.1)
    base = 10 ** math.floor(math.log10(raw))
    return next(m * base for m in (1, 2, 5, 10) if m * base >= raw)


def _bar(x0: float, x1: float, y: float, phase: str, tip: str) -> str:
    width = max(x1 - x0, 1.5)  # a phase of a few ms still shows
    cls = phase.replace(" ", "-")
    return (
        f'<rect class="bar {cls}" x="{x0:.1f}" y="{y:.1f}" width="{width:.1f}" height="{BAR_H}" '
        f'fill="{COLORS[phase]}"><title>{escape(tip)}</title></rect>'
    )


def render(doc: StatusDoc) -> str:
    """The chart of ``doc``'s tasks as one <svg id="gantt">, or "" while nothing is stamped."""
    stamps = [t for t in doc.timeline.values() if t] + [t for task in doc.tasks for t in task.timeline.values() if t]
    stamps = [t for t in stamps if math.isfinite(t)]
    if not stamps:
        return ""
    origin = doc.timeline.get("submitted") or doc.timeline.get("am_started") or min(stamps)
    stamps = [t for t in stamps if abs(t - origin) < _SANE_S]
    running = any(t.state == TaskState.RUNNING for t in doc.tasks)
    end = max([*stamps, doc.time if running and math.isfinite(doc.time) else origin, origin + 1.0])
    span = end - origin
    scale = CHART_W / span

    def x(t: float) -> float:
        return LABEL_W + (t - origin) * scale

    def sane(t: float | None) -> bool:
        return bool(t) and math.isfinite(t or 0.0) and abs((t or 0.0) - origin) < _SANE_S

    rows = ["job", *(t.name for t in doc.tasks)]
    height = AXIS_H + ROW_H * len(rows) + LEGEND_H
    width = LABEL_W + CHART_W + 10
    out = [
        f'<svg id="gantt" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="system-ui,sans-serif" font-size="11">'
    ]
    step = _tick_step(span)
    n = 0
    while n * step <= span + 1e-9:
        tx = x(origin + n * step)
        out.append(
            f'<line class="tick" x1="{tx:.1f}" y1="{AXIS_H - 4}" x2="{tx:.1f}" y2="{AXIS_H + ROW_H * len(rows)}" '
            f'stroke="#e5e5e5"/><text x="{tx:.1f}" y="{AXIS_H - 8}" text-anchor="middle" fill="#555">'
            f"{n * step:g}s</text>"
        )
        n += 1
    for i, name in enumerate(rows):
        y = AXIS_H + i * ROW_H
        out.append(f'<text class="label" x="4" y="{y + BAR_H}" fill="#222">{escape(name)}</text>')
    am, submitted = doc.timeline.get("am_started"), doc.timeline.get("submitted")
    if sane(am) and sane(submitted) and am and submitted:
        tip = f"job: ApplicationMaster start {am - submitted:.1f} s"
        out.append(_bar(x(submitted), x(am), AXIS_H + 3, "AM start", tip))
    for i, task in enumerate(doc.tasks, start=1):
        y = AXIS_H + i * ROW_H + 3
        line = task.timeline
        for start, stop, phase in PHASES:
            a, b = line.get(start), line.get(stop)
            if sane(a) and sane(b) and a is not None and b is not None and b >= a:
                out.append(_bar(x(a), x(b), y, phase, f"{task.name}: {phase} {b - a:.1f} s ({start} -> {stop})"))
        began = line.get("first_step") or line.get("process_started")
        if task.state == TaskState.RUNNING and sane(began) and began is not None and end > began:
            out.append(_bar(x(began), x(end), y, TRAINING, f"{task.name}: running {end - began:.1f} s"))
    for event in doc.events:
        if event.kind == "task_restart" and event.task in rows and sane(event.time):
            ry = AXIS_H + rows.index(event.task) * ROW_H
            rx = x(event.time)
            out.append(
                f'<line class="restart" x1="{rx:.1f}" y1="{ry}" x2="{rx:.1f}" y2="{ry + ROW_H}" stroke="#b02a37" '
                f'stroke-width="2"><title>{escape(event.task)} restarted at +{event.time - origin:.1f} s: '
                f"{escape(event.message)}</title></line>"
            )
        if event.kind == "membership" and sane(event.time):  # across every row: the whole group re-formed
            mx = x(event.time)
            out.append(
                f'<line class="membership" x1="{mx:.1f}" y1="{AXIS_H}" x2="{mx:.1f}" y2="{AXIS_H + ROW_H * len(rows)}" '
                f'stroke="#1f6feb" stroke-width="2" stroke-dasharray="4 3"><title>+{event.time - origin:.1f} s: '
                f"{escape(event.message)}</title></line>"
            )
    ly = AXIS_H + ROW_H * len(rows) + 6
    lx = float(LABEL_W)
    for phase in ("AM start", *(p for _, _, p in PHASES), TRAINING):
        out.append(
            f'<rect x="{lx:.0f}" y="{ly}" width="10" height="10" fill="{COLORS[phase]}"/>'
            f'<text x="{lx + 13:.0f}" y="{ly + 9}" fill="#555">{escape(phase)}</text>'
        )
        lx += 24 + 6.2 * len(phase)
    out.append(
        f'<line x1="{lx:.0f}" y1="{ly}" x2="{lx:.0f}" y2="{ly + 10}" stroke="#b02a37" stroke-width="2"/>'
        f'<text x="{lx + 5:.0f}" y="{ly + 9}" fill="#555">restart</text></svg>'
    )
    return "".join(out)
