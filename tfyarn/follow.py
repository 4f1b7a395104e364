"""Following a job to its end: the progress lines and the poll loop behind ``Client.wait``.

Kept apart from the CLI so Python callers, ``submit --wait`` and ``tfyarn wait``
share one loop, and apart from skein so it is tested with a fake client: it
needs only ``report(app_id)`` and ``live_doc(report)``, and optionally a way to
have the AM's documents pushed while the job trains (tfyarn.docwatch).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from tfyarn.docwatch import WatchEnded
from tfyarn.status import JobReport
from tfyarn.wire import StatusDoc

TRAINING_DOC_EVERY_S = 5.0  # while training, the AM's status is fetched this often (the job's state every poll)
# While training, the job's state is read every TRAINING_SLOWER x poll_s: each read is an RM call
# through skein's driver, CPU on the machine that may train too (benchmarks/ddp_overhead.py).
TRAINING_SLOWER = 2.0
# With the AM's documents pushed (tfyarn.docwatch), YARN is still asked this often while nothing
# arrives: an AM that vanished without a word (its container killed) shows there.
WATCH_CHECK_S = 30.0
# The AM's own states before it decides; any other is its final one, written just before it ends.
_UNDECIDED = frozenset({"STARTING", "RUNNING"})


class JobSource(Protocol):
    """What the loop reads: tfyarn.client.Client, or a test's fake."""

    def report(self, app_id: str) -> JobReport: ...

    def live_doc(self, rep: JobReport) -> StatusDoc | None: ...


class PushedDocs(Protocol):
    """The AM's status documents as it writes them (tfyarn.docwatch.DocWatch, or a test's fake)."""

    def next(self, timeout: float) -> StatusDoc | None: ...

    def close(self) -> None: ...


def progress_line(state: str, doc: StatusDoc | None, total: int | None = None) -> str:
    """One line of progress: the job state, and while it starts, its containers.

    ``total`` None: the task count is the AM's, whose table lists every task
    of the job from the start.
    """
    if state != "RUNNING" or not doc or not doc.tasks:
        return state
    tasks = doc.tasks
    n = len(tasks) if total is None else total
    allocated = sum(1 for t in tasks if t.yarn_container_id)
    registered = sum(1 for t in tasks if t.address)
    done = sum(1 for t in tasks if t.state.is_terminal())
    line = f"RUNNING: containers {allocated}/{n} allocated, {registered}/{n} registered"
    if doc.timeline.get("rendezvous"):
        line += f"; training ({done}/{n} task(s) ended)"
    return line


def follow(
    client: JobSource,
    app_id: str,
    total: int | None = None,
    progress: Callable[[str], None] | None = None,
    poll_s: float = 1.0,
    watch: Callable[[], PushedDocs | None] | None = None,
) -> JobReport:
    """Poll the job until it ends; return the final report.

    ``progress`` gets each line that differs from the one before, prefixed
    with the seconds since following began (``[  12.3s] RUNNING: ...``).
    The job's state (one RM call) is read every poll; the AM's status page,
    which goes through the RM's proxy and costs the training nodes' CPU, is
    read every poll while the gang starts and every TRAINING_DOC_EVERY_S
    once it trains. Once it trains, ``watch`` (tried once) may push the AM's
    documents instead: then nothing is polled until one says the AM decided,
    the push stream ends, or WATCH_CHECK_S pass without a document.
    """
    t0, last, doc_at = time.monotonic(), "", 0.0
    doc: StatusDoc | None = None
    pushed: PushedDocs | None = None
    decided = False  # the AM's pushed document said it decided: YARN's end is a second away

    def show(state: str) -> None:
        nonlocal last
        line = progress_line(state, doc, total)
        if line != last:
            if progress is not None:
                progress(f"[{time.monotonic() - t0:6.1f}s] {line}")
            last = line

    try:
        while True:
            rep = client.report(app_id)
            training = bool(doc and doc.timeline.get("rendezvous"))
            if rep.state.value != "RUNNING":
                doc = None
            elif not training or time.monotonic() - doc_at >= TRAINING_DOC_EVERY_S:
                doc, doc_at = client.live_doc(rep), time.monotonic()
            show(rep.state.value)
            if rep.state.is_terminal():
                return rep
            if watch is not None and training and rep.state.value == "RUNNING":
                pushed, watch = watch(), None  # one try: None (not the owner, say) keeps polling
            if pushed is None:
                time.sleep(poll_s * TRAINING_SLOWER if training and not decided else poll_s)
                continue
            deadline = time.monotonic() + WATCH_CHECK_S
            while pushed is not None:
                try:
                    new = pushed.next(deadline - time.monotonic())
                except WatchEnded:
                    pushed.close()
                    pushed = None
                    break  # the stream ended: ask YARN
                if new is None:
                    break  # quiet for WATCH_CHECK_S: ask YARN
                doc, doc_at = new, time.monotonic()
                show("RUNNING")
                if new.state not in _UNDECIDED:  # the AM decided and is ending: poll YARN to its end
                    pushed.close()
                    pushed, decided = None, True
    finally:
        if pushed is not None:
            pushed.close()
