"""The job's events, for operators: task restarts, lost nodes, the failure that ends a job, its end.

The AM records each event here (master.py calls in); the status document
carries the last MAX_EVENTS, and with ``--on-event CMD`` each event is
handed to CMD, run with /bin/sh in the AM's container, the event's JSON on
its stdin and in $TFYARN_EVENT. The hook runs on one background thread,
one event at a time in order, never in the AM's loop; each run is killed
after HOOK_TIMEOUT_S. A hook that fails or times out is logged as a
WARNING and never changes the job's outcome. ``close`` waits (within a
limit) for the hooks still queued, job_end's among them, before the AM
shuts down.
"""

from __future__ import annotations

import logging
import os
import queue
import re
import shlex
import signal
import subprocess
import threading
import time
from collections import deque

from appmaster.am.tasks import Task, TaskTable, why
from tfyarn import logfmt, protocol, wire
from tfyarn.status import TaskState

log = logging.getLogger(logfmt.AM_LOGGER)

TASK_RESTART = "task_restart"
NODE_LOST = "node_lost"
TASK_FAILED = "task_failed"
MEMBERSHIP = "membership"  # an elastic group's world size changed (a rendezvous round completed)
EXEC = "exec"  # `tfyarn exec` ran a command in a task: once when it starts, once when it ends
SAVE = "save"  # `tfyarn save` asked for a snapshot; then each output task's snapshot, with its URIs
JOB_END = "job_end"
KINDS = (TASK_RESTART, NODE_LOST, TASK_FAILED, MEMBERSHIP, EXEC, SAVE, JOB_END)
EXEC_SHOWN = 200  # characters of an exec's command line shown in its event

MAX_EVENTS = 100  # kept in the status document, the newest
HOOK_TIMEOUT_S = 30.0  # each run of the --on-event command
CLOSE_GRACE_S = 5.0  # close() waits this beyond one hook's limit for the queue to drain
# YARN's diagnostics for a container of a lost node (SchedulerUtils.LOST_CONTAINER, exit status
# ABORTED = -100): "Container released on a *lost* node"; skein passes them as the exit message
# of a FAILED container. Matched loosely: case, the asterisks and the wording around them may vary.
_LOST_NODE = re.compile(r"\blost\W+(?:\w+\W+)?node\b|\bnode\W+(?:\w+\W+)?lost\b", re.IGNORECASE)


def is_node_lost(exit_message: str) -> bool:
    """Whether YARN's word on an ended container says its node was lost."""
    return bool(_LOST_NODE.search(exit_message or ""))


class Hook:
    """Runs ``command`` for each event on one worker thread; ``submit`` never blocks."""

    def __init__(self, command: str, app_id: str = "", timeout_s: float | None = None):
        self.command, self.app_id = command, app_id
        self.timeout_s = HOOK_TIMEOUT_S if timeout_s is None else timeout_s
        self._queue: queue.Queue[wire.Event | None] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name="tfyarn on-event hook", daemon=True)
        self._thread.start()

    def submit(self, event: wire.Event) -> None:
        self._queue.put(event)

    def close(self, wait_s: float) -> bool:
        """Let the queued hooks run, waiting at most ``wait_s``; True when all of them ran."""
        self._queue.put(None)
        self._thread.join(wait_s)
        if self._thread.is_alive():
            log.warning(f"--on-event: hooks still queued or running after {wait_s:.0f} s; the AM stops without them")
            return False
        return True

    def _work(self) -> None:
        while (event := self._queue.get()) is not None:
            try:
                self.run(event)
            except Exception as e:  # a hook never takes the AM down
                log.warning(f"--on-event hook for {event.kind} could not run: {type(e).__name__}: {e}")

    def run(self, event: wire.Event) -> None:
        """One run of the command for ``event``, killed (its whole process group) after the limit."""
        body = event.to_json()
        env = {**os.environ, protocol.ENV_EVENT: body, protocol.ENV_APP_ID: self.app_id}
        proc = subprocess.Popen(["/bin/sh", "-c", self.command], stdin=subprocess.PIPE, env=env, start_new_session=True)
        try:
            proc.communicate(body.encode(), timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
            log.warning(f"--on-event hook for {event.kind} timed out after {self.timeout_s:.0f} s; killed it")
            return
        if proc.returncode != 0:
            log.warning(f"--on-event hook for {event.kind} exited with code {proc.returncode}")


class Events:
    """The job's events, newest last; each handed to the hook if the job has one."""

    def __init__(self, hook_command: str = "", app_id: str = ""):
        self._kept: deque[wire.Event] = deque(maxlen=MAX_EVENTS)
        self._once: set[tuple[str, ...]] = set()
        self.count = 0  # every event recorded (the status document keeps the last MAX_EVENTS)
        self.hook = Hook(hook_command, app_id) if hook_command else None

    def record(self, kind: str, message: str, task: str = "", host: str = "", once: str = "") -> wire.Event | None:
        """Record one event; with ``once``, an event of this kind, task and key is recorded only the first time."""
        if once:
            key = (kind, task, once)
            if key in self._once:
                return None
            self._once.add(key)
        event = wire.Event(kind=kind, time=time.time(), task=task, host=host, message=message)
        self._kept.append(event)
        self.count += 1
        log.info(f"event {kind}: {message}")
        if self.hook:
            self.hook.submit(event)
        return event

    def recent(self) -> tuple[wire.Event, ...]:
        return tuple(self._kept)

    # -- what the AM reports -------------------------------------------------------------------
    def failure(self, t: Task) -> None:
        """A failed task, before its restart policy is applied: its node lost? (once per container)."""
        if is_node_lost(t.exit_message):
            self.record(
                NODE_LOST,
                f"{t.name}'s container {t.yarn_container_id or '?'} ended: {t.host or 'its node'} "
                f"was lost ({t.exit_message})",
                t.name,
                t.host,
                once=t.yarn_container_id or t.exit_message,
            )

    def restart(self, t: Task, delay_s: float, restart: int, all_tasks: int = 0) -> None:
        """Failed task ``t`` is restarted (before its reset): alone, or with every task (``all_tasks``)."""
        what = f"restarting all {all_tasks} task(s), job restart {restart}" if all_tasks else f"restart {restart}"
        self.record(
            TASK_RESTART,
            f"{t.name} failed ({why(t)}) on {t.host or 'unknown host'}; {what} in {delay_s:.0f} s",
            t.name,
            t.host,
        )

    def dropped(self, t: Task, members: int, minimum: int) -> None:
        """An elastic task is given up (its restart policy allows no replacement); the group goes on."""
        self.record(
            TASK_FAILED,
            f"{t.name} failed ({why(t)}) on {t.host or 'unknown host'}; not replaced (restart policy "
            f"{'exhausted' if t.restarts else 'never'}); {members} of at least {minimum} train on",
            t.name,
            t.host,
        )

    def membership(self, old: int, new: int) -> None:
        """The elastic group's world size changed."""
        what = f"world size {old} -> {new}" if old else f"training started with world size {new}"
        self.record(MEMBERSHIP, what)

    def execs(self, kv: dict[str, bytes], hosts: dict[str, str]) -> None:
        """Each `tfyarn exec` session the tasks' agents recorded: its start, and its end once it ended."""
        for key, raw in kv.items():
            if not key.startswith(protocol.KV_EXEC_RECORD_PREFIX):
                continue
            try:
                r = wire.ExecRecord.from_json(raw)
            except wire.WireError as e:
                self.record(EXEC, f"an unreadable exec record ({e})", once=key)
                continue
            line = shlex.join(r.argv)
            line = line if len(line) <= EXEC_SHOWN else line[: EXEC_SHOWN - 3] + "..."
            host = hosts.get(r.task, "")
            how = " in a terminal" if r.tty else ""
            self.record(EXEC, f"{r.user} ran `{line}` in {r.task}{how}", r.task, host, once=r.session)
            if r.exit_code is not None:
                end = f"; {r.message}" if r.message else ""
                msg = f"{r.user}'s exec in {r.task} ended with exit code {r.exit_code} (`{line}`){end}"
                self.record(EXEC, msg, r.task, host, once=r.session + "/end")

    def saves(self, kv: dict[str, bytes], hosts: dict[str, str]) -> None:
        """`tfyarn save`'s request (KV_SAVE's value is its time), and each snapshot published after it.

        Snapshots of the --save-every timer alone are not events: they would push everything
        else out of the last MAX_EVENTS.
        """
        try:
            asked = float(kv.get(protocol.KV_SAVE) or 0)
        except ValueError:
            asked = 0.0
        if not asked:
            return
        self.record(SAVE, "a snapshot of the outputs was asked for (tfyarn save)", once=str(asked))
        for key, raw in kv.items():
            if not key.startswith(protocol.KV_SNAPSHOT_PREFIX):
                continue
            task = key[len(protocol.KV_SNAPSHOT_PREFIX) :]
            try:
                r = wire.SnapshotRecord.from_json(raw)
            except wire.WireError as e:
                self.record(SAVE, f"an unreadable snapshot record of {task} ({e})", task, once=key)
                continue
            if r.time >= asked:
                msg = protocol.save_event_message(task, r.uris)
                self.record(SAVE, msg, task, hosts.get(task, ""), once=str(asked))

    def decided(self, table: TaskTable, outcome: tuple[str, str]) -> None:
        """The job is decided: the failure that ends it, if a task's (the first, as TaskTable.outcome finds it)."""
        if outcome[0] != "FAILED":
            return
        for t in table.tasks:
            if t.state in (TaskState.FAILED, TaskState.KILLED) and t.role not in table.tolerated:
                after = f" after {t.restarts} restart(s)" if t.restarts else ""
                self.record(
                    TASK_FAILED,
                    f"{t.name} failed ({why(t)}) on {t.host or 'unknown host'}{after}; the job fails",
                    t.name,
                    t.host,
                )
                return

    def job_end(self, status: str, diagnostics: str) -> None:
        self.record(JOB_END, f"job {status}: {diagnostics}" if diagnostics else f"job {status}")

    def close(self, wait_s: float | None = None) -> bool:
        """Before the AM shuts down: the queued hooks (job_end's last) run, within ``wait_s``
        (default: one hook's limit and a grace)."""
        if not self.hook:
            return True
        return self.hook.close(HOOK_TIMEOUT_S + CLOSE_GRACE_S if wait_s is None else wait_s)
