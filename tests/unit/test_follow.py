"""Following a job (tfyarn.follow, Client.wait): progress lines, printed once per change, to the job's end."""
from __future__ import annotations

import queue
import types
from dataclasses import replace

import pytest

from tfyarn import follow as follow_mod
from tfyarn.client import Client
from tfyarn.docwatch import DocWatch, WatchEnded, open_watch
from tfyarn.follow import follow, progress_line
from tfyarn.status import JobReport, JobState, TaskState
from tfyarn.wire import StatusDoc, TaskStatus

APP = "application_1_0001"


def task(i: int, **over) -> TaskStatus:
    return TaskStatus(**{"name": f"worker:{i}", "role": "worker", "index": i, "state": TaskState.RUNNING, **over})


def doc(*tasks: TaskStatus, rendezvous: bool = False) -> StatusDoc:
    return StatusDoc(app_id=APP, state="RUNNING", tasks=tasks, timeline={"rendezvous": 5.0} if rendezvous else {})


def report(state: JobState, diagnostics: str = "") -> JobReport:
    return JobReport(app_id=APP, name="demo", state=state, yarn_state=state.value, final_status="UNDEFINED",
                     diagnostics=diagnostics, tracking_url="http://rm:8088/proxy/application_1_0001/",
                     queue="default", user="ann", start_time_ms=1, finish_time_ms=0)


class FakeJob:
    """A job that goes through ``steps``, one (state, AM document) per poll; the last repeats."""

    def __init__(self, steps: list[tuple[JobState, StatusDoc | None]]) -> None:
        self.steps, self.polls, self.doc_reads = steps, 0, 0

    def report(self, app_id: str) -> JobReport:
        assert app_id == APP
        state, _ = self.steps[min(self.polls, len(self.steps) - 1)]
        self.polls += 1
        return report(state, "all 2 worker task(s) succeeded" if state.is_terminal() else "")

    def live_doc(self, rep: JobReport) -> StatusDoc | None:
        assert rep.state is JobState.RUNNING, "the AM's page is read only while the job runs"
        self.doc_reads += 1
        return self.steps[min(self.polls, len(self.steps)) - 1][1]


STARTING = doc(task(0), task(1))
ONE_ALLOCATED = doc(task(0, yarn_container_id="c2"), task(1))
ALL_REGISTERED = doc(task(0, yarn_container_id="c2", address="h:1"), task(1, yarn_container_id="c3", address="h:2"))
TRAINING = replace(ALL_REGISTERED, timeline={"rendezvous": 5.0})
R = JobState.RUNNING
STEPS = [(JobState.SUBMITTED, None), (JobState.ACCEPTED, None), (JobState.ACCEPTED, None), (R, None),
         (R, STARTING), (R, STARTING), (R, ONE_ALLOCATED), (R, ALL_REGISTERED), (R, TRAINING), (R, TRAINING),
         (JobState.SUCCEEDED, None)]


def test_progress_line_shows_the_state_until_the_am_publishes_tasks():
    assert progress_line("ACCEPTED", None) == "ACCEPTED"
    assert progress_line("RUNNING", None, 2) == "RUNNING"
    assert progress_line("RUNNING", doc(), 2) == "RUNNING"  # a document without tasks yet
    assert progress_line("SUCCEEDED", TRAINING, 2) == "SUCCEEDED"


def test_progress_line_counts_containers_then_training():
    assert progress_line("RUNNING", ONE_ALLOCATED, 2) == "RUNNING: containers 1/2 allocated, 0/2 registered"
    assert progress_line("RUNNING", ALL_REGISTERED, 2) == "RUNNING: containers 2/2 allocated, 2/2 registered"
    ended = doc(task(0, state=TaskState.SUCCEEDED), task(1, state=TaskState.RESTARTING), rendezvous=True)
    assert progress_line("RUNNING", ended, 2).endswith("; training (1/2 task(s) ended)")


def test_progress_line_without_a_total_takes_the_ams_task_count():
    """The AM's table lists every task of the job from the start: `tfyarn wait` needs no spec."""
    assert progress_line("RUNNING", ONE_ALLOCATED) == progress_line("RUNNING", ONE_ALLOCATED, 2)
    three = doc(task(0, yarn_container_id="c2"), task(1), task(2), rendezvous=True)
    assert progress_line("RUNNING", three) == (
        "RUNNING: containers 1/3 allocated, 0/3 registered; training (0/3 task(s) ended)")


def test_the_loop_prints_each_change_once_and_returns_the_final_report():
    job, lines = FakeJob(STEPS), []
    final = follow(job, APP, 2, progress=lines.append, poll_s=0)
    assert final.state is JobState.SUCCEEDED and final.diagnostics == "all 2 worker task(s) succeeded"
    assert job.polls == len(STEPS)  # it ends on the terminal state, without another poll
    assert [line.split("] ", 1)[1] for line in lines] == [
        "SUBMITTED", "ACCEPTED", "RUNNING",
        "RUNNING: containers 0/2 allocated, 0/2 registered",
        "RUNNING: containers 1/2 allocated, 0/2 registered",
        "RUNNING: containers 2/2 allocated, 2/2 registered",
        "RUNNING: containers 2/2 allocated, 2/2 registered; training (0/2 task(s) ended)",
        "SUCCEEDED",
    ]
    assert all(line.startswith("[") and line.split("]")[0].strip("[ ").endswith("s") for line in lines)


@pytest.mark.parametrize("end", [JobState.FAILED, JobState.KILLED])
def test_the_loop_ends_on_any_terminal_state_without_raising(end):
    job = FakeJob([(JobState.ACCEPTED, None), (R, STARTING), (end, None), (JobState.SUCCEEDED, None)])
    assert follow(job, APP, poll_s=0).state is end
    assert job.polls == 3


def test_the_loop_derives_the_total_from_the_ams_document():
    lines: list[str] = []
    follow(FakeJob(STEPS), APP, None, progress=lines.append, poll_s=0)
    assert any(line.endswith("RUNNING: containers 1/2 allocated, 0/2 registered") for line in lines)


def test_an_ended_job_is_one_line():
    lines: list[str] = []
    job = FakeJob([(JobState.SUCCEEDED, None)])
    assert follow(job, APP, progress=lines.append, poll_s=0).state is JobState.SUCCEEDED
    assert len(lines) == 1 and lines[0].endswith("] SUCCEEDED") and job.doc_reads == 0


def test_the_ams_page_is_read_every_poll_while_starting_and_rarely_while_training():
    job = FakeJob([*STEPS[:9], *[(R, TRAINING)] * 20, (JobState.SUCCEEDED, None)])
    follow(job, APP, 2, poll_s=0)
    # polls 4..9 read it (gang starting); then nothing for TRAINING_DOC_EVERY_S (the test takes far less)
    assert job.doc_reads == 6 and follow_mod.TRAINING_DOC_EVERY_S >= 1


def test_without_a_progress_callback_it_is_silent(capsys):
    follow(FakeJob(STEPS), APP, poll_s=0)
    assert capsys.readouterr() == ("", "")


def test_client_wait_is_the_loop():
    """Client.wait needs only report(), live_doc() and a skein client to open the push watch with
    (None here: the watch cannot open, and it polls)."""
    lines: list[str] = []
    job = FakeJob(STEPS)
    job._skein = None  # type: ignore[attr-defined]
    final = Client.wait(job, APP, progress=lines.append, poll_s=0)  # type: ignore[arg-type]
    assert final.state is JobState.SUCCEEDED and lines[-1].endswith("] SUCCEEDED") and len(lines) == 8


class FakePushed:
    """The AM's documents as a watch would push them: each item a document, None (quiet for the
    whole wait) or "end" (the stream broke)."""

    def __init__(self, items: list[StatusDoc | None | str]) -> None:
        self.items, self.waits, self.closed = list(items), [], False

    def next(self, timeout: float) -> StatusDoc | None:
        self.waits.append(timeout)
        item = self.items.pop(0) if self.items else None
        if item == "end":
            raise WatchEnded("ConnectionError: Unable to connect to application")
        return item  # type: ignore[return-value]

    def close(self) -> None:
        self.closed = True


TRAIN_STEPS = [(R, ALL_REGISTERED), (R, TRAINING), (R, TRAINING), (JobState.SUCCEEDED, None)]


def test_while_training_the_pushed_documents_replace_polling(monkeypatch):
    one_ended = replace(TRAINING, tasks=(TRAINING.tasks[0], replace(TRAINING.tasks[1], state=TaskState.SUCCEEDED)))
    decided = replace(one_ended, state="SUCCEEDED",
                      tasks=tuple(replace(t, state=TaskState.SUCCEEDED) for t in one_ended.tasks))
    pushed, opened, job, lines = FakePushed([one_ended, decided]), [], FakeJob(TRAIN_STEPS), []

    def watch():
        opened.append(1)
        return pushed

    slept: list[float] = []
    monkeypatch.setattr(follow_mod.time, "sleep", slept.append)
    final = follow(job, APP, 2, progress=lines.append, poll_s=1.0, watch=watch)
    assert final.state is JobState.SUCCEEDED
    assert slept[-1] == 1.0  # once the AM decided, YARN is asked every poll, not every training poll
    assert opened == [1] and pushed.closed  # opened once training was seen, closed once the AM decided
    # RM: the starting poll, the training poll that opened the watch, then only after the AM decided
    assert job.polls == 4 and job.doc_reads == 2
    assert [line.split("] ", 1)[1] for line in lines][-3:] == [
        "RUNNING: containers 2/2 allocated, 2/2 registered; training (1/2 task(s) ended)",
        "RUNNING: containers 2/2 allocated, 2/2 registered; training (2/2 task(s) ended)", "SUCCEEDED"]


def test_a_quiet_watch_still_asks_yarn_every_watch_check_s():
    pushed = FakePushed([None, None])
    job = FakeJob([(R, TRAINING), (R, TRAINING), (R, TRAINING), (JobState.FAILED, None)])
    assert follow(job, APP, 2, poll_s=0, watch=lambda: pushed).state is JobState.FAILED
    assert job.polls == 4 and len(pushed.waits) == 2 and pushed.closed
    assert 0 < pushed.waits[0] <= follow_mod.WATCH_CHECK_S


def test_a_broken_watch_falls_back_to_polling():
    pushed, opened = FakePushed(["end"]), []
    job = FakeJob([(R, TRAINING), (R, TRAINING), (R, TRAINING), (R, TRAINING), (JobState.KILLED, None)])
    final = follow(job, APP, 2, poll_s=0, watch=lambda: opened.append(1) or pushed)
    assert final.state is JobState.KILLED and pushed.closed and opened == [1]  # never reopened
    assert job.polls == 5 and len(pushed.waits) == 1


def test_without_a_watch_following_polls_as_before():
    job = FakeJob([*TRAIN_STEPS[:3], (R, TRAINING), (JobState.SUCCEEDED, None)])
    assert follow(job, APP, 2, poll_s=0, watch=lambda: None).state is JobState.SUCCEEDED
    assert job.polls == 5


class FakeEvents:
    def __init__(self, items: list) -> None:
        self.items, self.unsubscribed = list(items), False

    def get(self, timeout: float):
        if not self.items:
            raise queue.Empty
        item = self.items.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    def unsubscribe_all(self) -> None:
        self.unsubscribed = True


def test_docwatch_reads_skeins_events_and_says_when_the_stream_ended():
    def event(d: StatusDoc | bytes) -> types.SimpleNamespace:  # skein's Event: the value is in result
        raw = d if isinstance(d, bytes) else d.to_json().encode()
        return types.SimpleNamespace(key="tfyarn/status", result=types.SimpleNamespace(value=raw, owner=None))

    other = replace(TRAINING, app_id="application_1_0002")
    w = DocWatch(FakeEvents([event(TRAINING), event(other), ConnectionError("Unable to connect to application")]), APP)
    assert w.next(1.0) == TRAINING
    assert w.next(1.0) is None  # another job's document is not this one's
    with pytest.raises(WatchEnded, match="ConnectionError"):
        w.next(1.0)
    assert w.next(0.1) is None  # nothing queued: a quiet wait
    w.close()
    bad = DocWatch(FakeEvents([event(b"{not json")]), APP)
    with pytest.raises(WatchEnded, match="unreadable"):
        bad.next(1.0)


def test_open_watch_is_none_where_the_store_cannot_be_opened():
    class NoAccess:
        def connect(self, app_id, wait=False):
            raise PermissionError("not the owner")

    assert open_watch(NoAccess(), APP) is None


def test_logs_of_a_job_that_just_ended_wait_until_yarn_has_collected_every_containers(monkeypatch):
    """`yarn logs` during aggregation exits 0 with only the containers collected so far: `tfyarn logs`
    right after `--wait` must not print part of a job's output as all of it."""
    client = Client.__new__(Client)
    aggregating, read_at = [True, True, False], []
    monkeypatch.setattr(client, "report", lambda app_id: report(JobState.SUCCEEDED), raising=False)
    monkeypatch.setattr(client, "_aggregating", lambda app_id: aggregating.pop(0), raising=False)
    monkeypatch.setattr(client, "_yarn_logs", lambda app_id: read_at.append(len(aggregating)) or "all", raising=False)
    monkeypatch.setattr(follow_mod.time, "sleep", lambda s: None)
    assert client.logs(APP) == "all" and read_at == [0]  # read only once YARN said it was done
    running = Client.__new__(Client)
    monkeypatch.setattr(running, "report", lambda app_id: report(JobState.RUNNING), raising=False)
    monkeypatch.setattr(running, "_aggregating", lambda app_id: pytest.fail("a running job is not waited for"),
                        raising=False)
    monkeypatch.setattr(running, "_yarn_logs", lambda app_id: "so far", raising=False)
    assert running.logs(APP) == "so far"
