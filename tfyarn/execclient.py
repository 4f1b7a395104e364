"""`tfyarn exec`'s client side: one session with a running task's exec agent (appmaster/executor/execagent.py).

Everything travels through the job's AM key-value store over skein's mutual TLS, which only the job's
credentials open: no sshd, no port of the task's node reached directly. Checks come first, each with its
own one-line error: the job runs, the caller owns it, the task exists and runs. Then the request; the
agent accepts or refuses within protocol.EXEC_ANSWER_S; then output until the command's exit code.
"""

from __future__ import annotations

import os
import queue
import signal
import sys
import termios
import threading
import time
import tty as ttymod
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO

from tfyarn import credentials, protocol, wire
from tfyarn.errors import TfyarnError
from tfyarn.status import TaskState


@dataclass(frozen=True)
class ExecOptions:
    app_id: str
    task: str  # ROLE:INDEX
    argv: tuple[str, ...]
    interactive: bool = False  # forward stdin
    tty: bool = False  # a terminal for the command; this side's terminal goes raw meanwhile


def preflight(client: Any, opts: ExecOptions) -> None:
    """Refuse, with the reason, what no agent would serve: an ended job, another's job, a task not running."""
    rep = client.report(opts.app_id)
    if rep.state.is_terminal():
        raise TfyarnError(
            f"{opts.app_id} has ended ({rep.state.value}): tfyarn exec reaches the tasks of a running job only; "
            f"`tfyarn logs {opts.app_id}` shows what they printed"
        )
    me = credentials.user_name()
    if rep.user and me != rep.user:
        raise TfyarnError(
            f"only {opts.app_id}'s owner ({rep.user}) can exec into its tasks, and you are {me}: exec travels "
            "through the job's own TLS channel, which only the credentials it was submitted with open"
        )
    doc = client.live_doc(rep)
    if doc is None:
        raise TfyarnError(f"{opts.app_id}'s AM has not started serving yet: try again in a few seconds")
    tasks = {t.name: t for t in doc.tasks}
    if opts.task not in tasks:
        names = ", ".join(list(tasks)[:12]) + (" ..." if len(tasks) > 12 else "")
        raise TfyarnError(f"{opts.app_id} has no task {opts.task}: its tasks are {names}")
    state = tasks[opts.task].state
    if state != TaskState.RUNNING:
        raise TfyarnError(
            f"task {opts.task} is {state.value}, not running: tfyarn exec reaches running tasks only"
            + (f" (`tfyarn logs {opts.app_id} --task {opts.task}` shows its output)" if state.is_terminal() else "")
        )


@contextmanager
def raw_terminal(fd: int) -> Iterator[None]:
    """This side's terminal passes every key through (^C, ^D, arrows) until the session ends."""
    saved = termios.tcgetattr(fd)
    try:
        ttymod.setraw(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


class Session:
    """One exec: the request, the input thread, the output loop; ``run`` returns the command's exit code."""

    def __init__(self, app: Any, opts: ExecOptions, stdin_fd: int, stdout: BinaryIO, stderr: BinaryIO):
        self.app, self.opts = app, opts
        self.stdin_fd, self.stdout, self.stderr = stdin_fd, stdout, stderr
        self.id = uuid.uuid4().hex[:16]
        self.inbox = f"{protocol.kv_exec_in(opts.task)}{self.id}/"
        self.outbox = protocol.kv_exec_out(self.id)
        self._seq = 0

    def _put(self, part: str, value: bytes) -> None:
        self.app.kv[self.inbox + part] = value

    def run(self) -> int:
        rows, cols = _size(self.stdin_fd) if self.opts.tty else (0, 0)
        request = wire.ExecRequest(
            session=self.id,
            task=self.opts.task,
            argv=self.opts.argv,
            user=credentials.user_name(),
            time=time.time(),
            interactive=self.opts.interactive,
            tty=self.opts.tty,
            rows=rows,
            cols=cols,
        )
        events = self.app.kv.events(prefix=self.outbox, event_type="PUT")  # before the request: nothing missed
        try:
            self._put("request", request.to_json().encode())
            self._answer(events)
            if self.opts.tty:
                with raw_terminal(self.stdin_fd):
                    return self._stream(events)
            return self._stream(events)
        finally:
            for prefix in (self.inbox, self.outbox):
                try:
                    self.app.kv.discard_prefix(prefix)
                except Exception:  # the job ended meanwhile: its store went with it
                    pass

    def _answer(self, events: Any) -> None:
        try:
            event = events.get(timeout=protocol.EXEC_ANSWER_S)
        except queue.Empty:
            raise TfyarnError(
                f"task {self.opts.task} did not answer within {protocol.EXEC_ANSWER_S} s: its command may not "
                "have started yet (exec reaches a task once its command runs), or its node is overloaded"
            ) from None
        part = event.key[len(self.outbox) :]
        if part == "refused":
            raise TfyarnError(f"task {self.opts.task} refused the exec: {event.result.value.decode(errors='replace')}")

    def _stream(self, events: Any) -> int:
        if self.opts.interactive:
            threading.Thread(target=self._send_input, daemon=True).start()
        if self.opts.tty:
            signal.signal(
                signal.SIGWINCH, lambda *_: self._put("resize", " ".join(map(str, _size(self.stdin_fd))).encode())
            )
        interrupted = 0
        while True:
            try:
                event = events.get(timeout=1.0)
            except queue.Empty:
                continue
            except KeyboardInterrupt:  # not in a terminal (there ^C is a key the command gets)
                interrupted += 1
                if interrupted > 1:
                    self.stderr.write(b"tfyarn exec: left; the command may still run in the task\n")
                    return 130
                self._put("signal", str(int(signal.SIGINT)).encode())
                continue
            except Exception as e:  # the AM went away: the job ended
                raise TfyarnError(f"the connection to {self.opts.app_id} ended: {type(e).__name__}: {e}") from None
            part, value = event.key[len(self.outbox) :], event.result.value
            if part == "exit":
                end = wire.ExecRecord.from_json(value)
                if end.message:
                    self.stderr.write(f"\r\ntfyarn exec: {end.message}\r\n".encode())
                return end.exit_code if end.exit_code is not None else 1
            if part[:1] in ("o", "e") and part[1:].isdigit():
                stream = self.stdout if part[0] == "o" else self.stderr
                stream.write(value)
                stream.flush()
                self.app.kv.discard(event.key)  # the store keeps no more than is in flight

    def _send_input(self) -> None:
        while True:
            try:
                data = os.read(self.stdin_fd, 4096)
            except OSError:
                data = b""
            try:
                if not data:
                    self._put("eof", b"")
                    return
                self._seq += 1
                self._put(f"in/{self._seq:09d}", data)
            except Exception:  # the session or the job ended
                return


def _size(fd: int) -> tuple[int, int]:
    try:
        size = os.get_terminal_size(fd)
        return size.lines, size.columns
    except OSError:
        return 0, 0


def run(client: Any, opts: ExecOptions) -> int:
    """Check, then run one exec session on this process's stdin/stdout/stderr; the command's exit code."""
    preflight(client, opts)
    app = client.connect(opts.app_id)
    session = Session(app, opts, sys.stdin.fileno(), sys.stdout.buffer, sys.stderr.buffer)
    return session.run()
