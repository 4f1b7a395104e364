"""Following a job to its end: the progress lines and the poll loop behind ``Client.wait``.

Kept apart from the CLI so Python callers, ``submit --wait`` and ``tfyarn wait``
share one loop, and apart from skein so it is tested with a fake client: it
needs only ``report(app_id)`` and ``live_doc(report)``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from tfyarn.status import JobReport
from tfyarn.wire import StatusDoc

TRAINING_DOC_EVERY_S = 5.0  # while training, the AM's status is fetched this often (the job's state every poll)
# While training, the job's state is read every TRAINING_SLOWER x poll_s: each read is an RM call
# through skein's driver, CPU on the machine that may train too (benchmarks/ddp_overhead.py).
TRAINING_SLOWER = 2.0


class JobSource(Protocol):
    """What the loop reads: tfyarn.client.Client, or a test's fake."""

    def report(self, app_id: str) -> JobReport: ...

    def live_doc(self, rep: JobReport) -> StatusDoc | None: ...


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
) -> JobReport:
    """Poll the job until it ends; return the final report.

    ``progress`` gets each line that differs from the one before, prefixed
    with the seconds since following began (``[  12.3s] RUNNING: ...``).
    The job's state (one RM call) is read every poll; the AM's status page,
    which goes through the RM's proxy and costs the training nodes' CPU, is
    read every poll while the gang starts and every TRAINING_DOC_EVERY_S
    once it trains.
    """
    t0, last, doc_at = time.monotonic(), "", 0.0
    doc: StatusDoc | None = None
    while True:
        rep = client.report(app_id)
        training = bool(doc and doc.timeline.get("rendezvous"))
        if rep.state.value != "RUNNING":
            doc = None
        elif not training or time.monotonic() - doc_at >= TRAINING_DOC_EVERY_S:
            doc, doc_at = client.live_doc(rep), time.monotonic()
        line = progress_line(rep.state.value, doc, total)
        if line != last:
            if progress is not None:
                progress(f"[{time.monotonic() - t0:6.1f}s] {line}")
            last = line
        if rep.state.is_terminal():
            return rep
        time.sleep(poll_s * TRAINING_SLOWER if training else poll_s)
