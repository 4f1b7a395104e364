"""`tfyarn exec` inside a task: run what the job's owner sends, as the task's command runs, and stream it back.

Requests and input arrive through the AM's key-value store (protocol.kv_exec_in), which skein serves
over mutual TLS with the job's own credentials: only their holder, the job's owner, can write there.
Output goes back under protocol.kv_exec_out(session). A session's command gets the user process's
environment (TF_CONFIG, CUDA_VISIBLE_DEVICES, ...), working dir and GPUs; in a Docker task it runs in the
task's container (`docker exec`). It runs in a process group of its own, which ``stop`` kills when the
task's command ends: an exec never outlives its task. Each session is recorded for the job's events.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import logging
import os
import pty
import queue
import select
import signal
import struct
import subprocess
import termios
import threading
import time
from typing import Any

from tfyarn import logfmt, protocol, wire

log = logging.getLogger(logfmt.EXECUTOR_LOGGER)

STALE_S = 60.0  # a request already waiting when the agent starts, older than this: its client gave up
CHUNK = 64 * 1024
DRAIN_S = 1.0  # after the command exits, how long its last output may take to be read
STOP_GRACE_S = 2.0  # SIGTERM, then SIGKILL


def _controlling_tty() -> None:
    """In the child, after setsid: its stdin (the pty) becomes its controlling terminal (job control, ^C)."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def set_winsize(fd: int, rows: int, cols: int) -> None:
    if rows > 0 and cols > 0:
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def exit_code(returncode: int) -> int:
    """A shell's spelling: 128 + N for a command killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


class Session:
    """One exec: its process, the pumps that send its output, the thread that feeds its input."""

    def __init__(
        self, app: Any, request: wire.ExecRequest, argv: list[str], env: dict[str, str], cwd: str, keep: set[int]
    ):
        self.app, self.request, self.keep = app, request, keep
        self.out = protocol.kv_exec_out(request.session)
        self.record = wire.ExecRecord(
            session=request.session,
            task=request.task,
            argv=request.argv,
            user=request.user,
            tty=request.tty,
            started=time.time(),
        )
        self._seq = 0
        self._lock = threading.Lock()
        self._input: queue.Queue[tuple[str, bytes]] = queue.Queue()
        self._input_fd: int | None = None
        self._stopping = ""
        if request.tty:
            master, slave = pty.openpty()
            set_winsize(slave, request.rows, request.cols)
            try:
                self.proc = subprocess.Popen(
                    argv,
                    stdin=slave,
                    stdout=slave,
                    stderr=slave,
                    env=env,
                    cwd=cwd,
                    start_new_session=True,
                    preexec_fn=_controlling_tty,
                )
            except BaseException:
                os.close(master)
                raise
            finally:
                os.close(slave)
            self._input_fd, readers = master, [(master, "o")]
        else:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if request.interactive else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=cwd,
                start_new_session=True,
            )
            assert self.proc.stdout and self.proc.stderr
            self._input_fd = self.proc.stdin.fileno() if self.proc.stdin else None
            readers = [(self.proc.stdout.fileno(), "o"), (self.proc.stderr.fileno(), "e")]
        keep.add(self.proc.pid)  # reaped by _finish alone: its exit code is what the client gets
        self._pumps = [threading.Thread(target=self._pump, args=r, daemon=True) for r in readers]
        self.finisher = threading.Thread(target=self._finish, daemon=True)
        self._feeder = threading.Thread(target=self._feed, daemon=True)

    def start(self) -> None:
        self.app.kv[self.out + "accepted"] = json.dumps({"pid": self.proc.pid}).encode()
        self.app.kv[protocol.KV_EXEC_RECORD_PREFIX + self.request.session] = self.record.to_json().encode()
        for t in [*self._pumps, self._feeder]:
            t.start()
        self.finisher.start()

    def deliver(self, part: str, value: bytes) -> None:
        """Input from the client (in the order the store received it), handed to the feeding thread."""
        self._input.put((part, value))

    def stop(self, why: str) -> None:
        """The task's command ended: end this exec's whole process group."""
        self._stopping = why
        self._signal(signal.SIGTERM)
        try:
            self.proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)

    def _signal(self, signum: int) -> None:
        try:
            os.killpg(self.proc.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass

    def _send(self, kind: str, data: bytes) -> None:
        with self._lock:
            self._seq += 1
            key = f"{self.out}{kind}{self._seq:09d}"
        self.app.kv[key] = data

    def _pump(self, fd: int, kind: str) -> None:
        """Copy one output stream to the store until it ends (or, for a pty, its command has exited)."""
        exited_at = 0.0
        while True:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                if self.proc.poll() is None:
                    continue
                exited_at = exited_at or time.monotonic()
                if time.monotonic() - exited_at > DRAIN_S:
                    return  # something it started still holds the terminal open
                continue
            try:
                data = os.read(fd, CHUNK)
            except OSError:  # EIO: a pty whose last holder closed it
                return
            if not data:
                return
            try:
                self._send(kind, data)
            except Exception as e:  # the AM is gone: the job is ending
                log.warning(f"exec {self.request.session}: output no longer reaches the client ({e})")
                return

    def _feed(self) -> None:
        while self.proc.poll() is None:
            try:
                part, value = self._input.get(timeout=0.5)
            except queue.Empty:
                continue
            try:
                if part.startswith("in/") and self._input_fd is not None:
                    view = memoryview(value)
                    while view:
                        view = view[os.write(self._input_fd, view) :]
                elif part == "eof" and self._input_fd is not None:
                    if self.request.tty:
                        os.write(self._input_fd, b"\x04")
                    elif self.proc.stdin:
                        self.proc.stdin.close()
                        self._input_fd = None
                elif part == "resize" and self.request.tty and self._input_fd is not None:
                    rows, cols = (int(x) for x in value.split())
                    set_winsize(self._input_fd, rows, cols)
                elif part == "signal":
                    self._signal(int(value))
            except (OSError, ValueError) as e:  # it closed its stdin, or a malformed message
                log.warning(f"exec {self.request.session}: input {part!r} not delivered ({e})")

    def _finish(self) -> None:
        """Wait for the command, let its output drain, then send how it ended and record it."""
        code = exit_code(self.proc.wait())
        self.keep.discard(self.proc.pid)
        for t in self._pumps:
            t.join(DRAIN_S + 1)
        self._signal(signal.SIGKILL)  # what it left in its group (the task ends them anyway)
        self._feeder.join(2)  # it stops once the command has exited; only then may the pty's fd go
        if self.request.tty and self._input_fd is not None and not self._feeder.is_alive():
            os.close(self._input_fd)
        self.record = dataclasses.replace(self.record, exit_code=code, message=self._stopping)
        body = self.record.to_json().encode()
        try:
            self.app.kv[self.out + "exit"] = body
            self.app.kv[protocol.KV_EXEC_RECORD_PREFIX + self.request.session] = body
            self.app.kv.discard_prefix(f"{protocol.kv_exec_in(self.request.task)}{self.request.session}/")
        except Exception as e:
            log.warning(f"exec {self.request.session}: its end was not reported ({e})")
        log.info(f"exec {self.request.session} by {self.request.user} ended with exit code {code}")


class ExecAgent:
    """Serves `tfyarn exec` for one task while its command runs (``start`` .. ``stop``)."""

    def __init__(
        self, app: Any, task: str, env: dict[str, str], cwd: str, container: str = "", keep: set[int] | None = None
    ):
        # env and cwd: those the task's command got; container: the Docker container it runs in, if any
        # (then env is the docker client's, and the command runs in there through `docker exec`);
        # keep: where the executor finds the children it must not reap (process.StopSignals.keep).
        self.app, self.task, self.env, self.cwd, self.container = app, task, env, cwd, container
        self.keep = keep if keep is not None else set()
        self.watch = protocol.kv_exec_in(task)
        self.sessions: dict[str, Session] = {}
        self._stopped = threading.Event()
        self._events: Any = None
        # A session is registered and started, or refused, as one step against stop(): stop() never
        # meets a session whose threads have not started, and no session starts after stop().
        self._lock = threading.Lock()

    def start(self) -> None:
        self._events = self.app.kv.events(prefix=self.watch, event_type="PUT")
        threading.Thread(target=self._serve, daemon=True).start()

    def stop(self, why: str = "the task's command ended; tfyarn ended this exec with it") -> None:
        with self._lock:
            self._stopped.set()
            sessions = list(self.sessions.values())
        for s in sessions:
            if s.proc.poll() is None:
                s.stop(why)
            s.finisher.join(DRAIN_S + 2)  # its end reported before the executor exits

    def _serve(self) -> None:
        try:  # requests put before this agent listened (the client waits EXEC_ANSWER_S)
            for key, value in sorted(self.app.kv.get_prefix(self.watch).items()):
                if key.endswith("/request"):
                    self._handle(key, value, pending=True)
        except Exception as e:
            log.warning(f"tfyarn exec: could not read waiting requests ({e})")
        while not self._stopped.is_set():
            try:
                event = self._events.get(timeout=0.5)
            except queue.Empty:
                continue
            except Exception as e:  # the AM is gone
                log.warning(f"tfyarn exec requests no longer reach this task ({type(e).__name__}: {e})")
                return
            self._handle(event.key, event.result.value if event.result else b"")

    def _handle(self, key: str, value: bytes, pending: bool = False) -> None:
        session, _, part = key[len(self.watch) :].partition("/")
        if part != "request":
            if session in self.sessions:
                self.sessions[session].deliver(part, value)
            return
        if session in self.sessions or self._stopped.is_set():
            return
        out = protocol.kv_exec_out(session)
        try:
            request = wire.ExecRequest.from_json(value)
        except wire.WireError as e:  # a client of another tfyarn version
            self.app.kv[out + "refused"] = f"this task's tfyarn cannot read the request: {e}".encode()
            return
        if pending and time.time() - request.time > STALE_S:
            return
        argv = list(request.argv)
        if self.container:
            argv = ["docker", "exec", "-i", *(["-t"] if request.tty else []), self.container, *argv]
        with self._lock:
            if self._stopped.is_set():  # the task's command ended while this request was read
                self.app.kv[out + "refused"] = b"the task's command has ended"
                return
            try:
                s = Session(self.app, request, argv, self.env, self.cwd, self.keep)
            except OSError as e:
                why = f"{argv[0]}: command not found" if isinstance(e, FileNotFoundError) else f"{argv[0]}: {e}"
                log.warning(f"exec {session} refused: {why}")
                self.app.kv[out + "refused"] = why.encode()
                return
            self.sessions[session] = s
            log.info(
                f"exec {session} by {request.user}: {' '.join(request.argv)}" + (" (terminal)" if request.tty else "")
            )
            s.start()
