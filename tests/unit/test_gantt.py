"""The startup timeline drawn as a Gantt chart: bars per phase, restarts marked, any document drawable."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from appmaster.am import gantt, page
from tests.unit.test_page import doc, task
from tfyarn.status import TaskState
from tfyarn.wire import Event

NS = {"s": "http://www.w3.org/2000/svg"}
FULL = {"allocated": 101.0, "localized": 102.0, "inputs_staged": 104.0, "registered": 104.5, "rendezvous": 106.0,
        "process_started": 106.5, "first_step": 109.0}


def svg(d) -> ET.Element:
    return ET.fromstring(gantt.render(d))


def bars(root: ET.Element) -> dict[str, tuple[float, float]]:
    """phase class -> (x, width) of the first task row's bars."""
    out = {}
    for r in root.findall("s:rect", NS):
        cls = r.get("class", "")
        if cls.startswith("bar "):
            out.setdefault(cls.split()[1], (float(r.get("x")), float(r.get("width"))))
    return out


def test_each_phase_is_a_bar_as_long_as_it_took_with_its_seconds_in_a_title():
    root = svg(doc(tasks=(task(timeline=FULL, state=TaskState.RUNNING),), time=120.0))
    got = bars(root)
    assert list(got) == ["AM-start", "localizing", "staging", "registering", "gang", "starting", "first-step",
                         "training"]
    scale = gantt.CHART_W / 20.0  # submitted 100 .. now 120
    assert abs(got["staging"][1] - 2.0 * scale) < 0.2 and abs(got["gang"][1] - 1.5 * scale) < 0.2
    assert abs(got["localizing"][0] - (gantt.LABEL_W + 1.0 * scale)) < 0.2
    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    assert "worker:0: staging 2.0 s (localized -> inputs_staged)" in titles
    labels = [t.text for t in root.findall("s:text", NS) if t.get("class") == "label"]
    assert labels == ["job", "worker:0"]


def test_a_finished_task_has_no_open_training_bar():
    assert "training" not in bars(svg(doc(tasks=(task(timeline=FULL, state=TaskState.SUCCEEDED),), time=500.0)))


def test_restarts_are_marked_on_their_tasks_row():
    ev = Event(kind="task_restart", time=110.0, task="worker:0", host="h", message="exit code 123")
    root = svg(doc(tasks=(task(timeline=FULL),), events=(ev,), time=120.0))
    marks = [m for m in root.findall("s:line", NS) if m.get("class") == "restart"]
    assert len(marks) == 1 and float(marks[0].get("y1")) == gantt.AXIS_H + gantt.ROW_H  # row 1: worker:0
    assert "restarted at +10.0 s: exit code 123" in marks[0].find("s:title", NS).text


def test_48_tasks_stay_readable_one_row_each():
    tasks = tuple(task(name=f"worker:{i}", index=i, timeline=FULL) for i in range(48))
    root = svg(doc(tasks=tasks, time=120.0))
    assert int(root.get("height")) == gantt.AXIS_H + gantt.ROW_H * 49 + gantt.LEGEND_H
    assert gantt.ROW_H >= 14  # 11px labels, one row per task


def test_broken_or_missing_times_draw_what_they_can():
    odd = {"allocated": float("inf"), "localized": 1e308, "inputs_staged": 104.0, "registered": 103.0}
    root = svg(doc(tasks=(task(timeline=odd),), time=float("nan")))
    assert "localizing" not in bars(root) and "registering" not in bars(root)  # never a negative bar
    assert gantt.render(doc(tasks=(task(timeline={}),), timeline={})) == ""


def test_the_page_puts_the_chart_first_and_keeps_the_table_folded():
    html = page.render(doc(tasks=(task(timeline=FULL),)))
    assert html.index('<svg id="gantt"') < html.index("<details><summary>Every stage")
    assert re.search(r'<table id="timeline">.*</table></details>', html, re.S)
