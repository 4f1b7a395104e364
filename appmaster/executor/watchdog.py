"""The hang watchdog (``--progress-timeout``): stop a command that shows no progress.

A deadlocked collective or a stuck input pipeline otherwise holds its
containers and GPUs until someone notices. Progress is a ``tfyarn.report``
call (the executor's Monitor sees it), or, for a script that reports
nothing, new bytes on its stdout or stderr. Once the script has sent a
heartbeat (``progress()``/``metric()``) only heartbeats count: a hung job
whose threads still log warnings is then still caught. The clock starts
when the command starts.

When it fires, the command's processes get SIGTERM then SIGKILL, as on any
stop, and the task ends with ``protocol.EXIT_NO_PROGRESS`` and a first line
that names the task and its last progress: the AM then applies the role's
restart policy like for any failure.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from typing import Protocol

from appmaster.executor import process
from tfyarn import protocol

log = logging.getLogger("tfyarn.executor.watchdog")

POLL_S = 1.0


class Reports(Protocol):
    """What the watchdog reads of the Monitor: the script's latest report (monotonic time)."""

    last_report: float
    last_report_what: str
    heartbeats: bool


class Watchdog(threading.Thread):
    def __init__(self, name: str, timeout_s: int, reports: Reports, stop: process.StopSignals):
        super().__init__(daemon=True, name="tfyarn-watchdog")
        self.name_, self.timeout_s, self.reports, self.stop = name, timeout_s, reports, stop
        self.started_at = self.last_output = time.monotonic()
        self.done = threading.Event()
        self.fired = ""  # the line saying why it stopped the command, once it has

    def saw_output(self) -> None:
        """The command wrote to stdout or stderr (process.run calls this per chunk)."""
        self.last_output = time.monotonic()

    def last_progress(self) -> tuple[float, str]:
        """(monotonic time, what it was) of the command's latest progress."""
        r = self.reports
        candidates = [(self.started_at, "the command's start")]
        if r.last_report:
            candidates.append((r.last_report, r.last_report_what))
        if not r.heartbeats and self.last_output > self.started_at:
            candidates.append((self.last_output, "output on its stdout/stderr"))
        return max(candidates)

    def run(self) -> None:
        while not self.done.wait(POLL_S):
            when, what = self.last_progress()
            idle = time.monotonic() - when
            if idle >= self.timeout_s:
                at = time.strftime("%H:%M:%S UTC", time.gmtime(time.time() - idle))
                self.fired = (
                    f"{self.name_} made no progress for {self.timeout_s} s (--progress-timeout): its last "
                    f"progress was {what}, at {at}; tfyarn stopped it"
                )
                log.error(self.fired)
                self.stop.stop_all(first=signal.SIGTERM)
                return

    def finish(self, outcome: process.Outcome) -> process.Outcome:
        """The command's outcome, or, if the watchdog stopped it, a no-progress failure saying so."""
        self.done.set()
        self.join(timeout=process.GRACE_S + 5)  # a stop it began is over: nothing of the command is left
        if not self.fired:
            return outcome
        return process.Outcome(protocol.EXIT_NO_PROGRESS, f"tfyarn: {self.fired}\n{outcome.stderr_tail}".rstrip())
