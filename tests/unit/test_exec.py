"""`tfyarn exec`: the client's session and a task's exec agent, through an in-memory key-value store.

The commands are real child processes (pipes, a real pty, process groups); only the AM's store is
the stand-in (tests/fakes.py). The cluster path (skein's TLS store, the checks against the RM and the
status document, tmux driving a shell) is tests/integration/test_exec.py.
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from appmaster.am.events import EXEC, Events
from appmaster.executor.execagent import ExecAgent, exit_code
from tests.fakes import FakeKV
from tfyarn import protocol, wire
from tfyarn.errors import TfyarnError
from tfyarn.execclient import ExecOptions, Session, preflight
from tfyarn.status import JobReport, JobState, TaskState

TASK = "worker:1"


@pytest.fixture
def agent(tmp_path: Path):  # type: ignore[no-untyped-def]
    app = SimpleNamespace(kv=FakeKV())
    tf_config = json.dumps({"task": {"type": "worker", "index": 1}})
    env = {**os.environ, "TF_CONFIG": tf_config, "CUDA_VISIBLE_DEVICES": "2"}
    a = ExecAgent(app, TASK, env, str(tmp_path))
    a.start()
    yield a
    a.stop()


def run(agent: ExecAgent, *argv: str, stdin_fd: int = -1, interactive: bool = False, tty: bool = False,
        app_id: str = "application_1_0001") -> tuple[int, bytes, bytes, Session]:
    out, err = io.BytesIO(), io.BytesIO()
    session = Session(agent.app, ExecOptions(app_id, TASK, argv, interactive, tty), stdin_fd, out, err)
    code = session.run()
    return code, out.getvalue(), err.getvalue(), session


def test_a_command_runs_in_the_tasks_env_and_dir_and_its_exit_code_comes_back(agent, tmp_path):  # type: ignore[no-untyped-def]
    code, out, err, _ = run(agent, sys.executable, "-c", (
        "import json, os, sys; print(json.loads(os.environ['TF_CONFIG'])['task']['index'], "
        "os.environ['CUDA_VISIBLE_DEVICES'], os.getcwd()); print('to stderr', file=sys.stderr); sys.exit(7)"))
    assert code == 7
    assert out.decode().split() == ["1", "2", str(tmp_path)]
    assert err == b"to stderr\n"


def test_stdin_is_forwarded_with_i_and_its_end_too(agent):  # type: ignore[no-untyped-def]
    r, w = os.pipe()
    os.write(w, b"hello\nworld\n")
    os.close(w)
    code, out, _, _ = run(agent, "cat", stdin_fd=r, interactive=True)
    assert (code, out) == (0, b"hello\nworld\n")


def test_without_i_the_command_reads_an_empty_stdin(agent):  # type: ignore[no-untyped-def]
    code, out, _, _ = run(agent, "sh", "-c", "cat; echo done")
    assert (code, out) == (0, b"done\n")


def test_with_t_the_command_has_a_terminal_of_the_clients_size(agent):  # type: ignore[no-untyped-def]
    master, slave = os.openpty()
    os.set_inheritable(slave, False)
    subprocess.run(["stty", "rows", "33", "cols", "101"], stdin=slave, check=True)
    # raw_terminal applies to the client's side: the slave here plays the user's terminal.
    feed = threading.Timer(0.5, lambda: os.write(master, b"exit 3\n"))
    feed.start()
    code, out, _, _ = run(agent, "sh", "-c", "test -t 0 && echo has-a-tty; stty size; exec sh -i",
                          stdin_fd=slave, interactive=True, tty=True)
    feed.join()
    text = out.decode(errors="replace")
    assert code == 3, text
    assert "has-a-tty" in text and "33 101" in text, text
    os.close(master)
    os.close(slave)


def test_an_unknown_command_is_refused_with_one_line(agent):  # type: ignore[no-untyped-def]
    with pytest.raises(TfyarnError, match="refused the exec: no-such-cmd-xyz: command not found"):
        run(agent, "no-such-cmd-xyz")


def test_the_session_is_recorded_and_its_keys_are_cleaned_up(agent):  # type: ignore[no-untyped-def]
    _, _, _, session = run(agent, "true")
    kv: FakeKV = agent.app.kv
    deadline = time.monotonic() + 5
    while kv.get_prefix(protocol.kv_exec_in(TASK)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert kv.get_prefix(protocol.kv_exec_in(TASK)) == {} and kv.get_prefix(session.outbox) == {}
    record = wire.ExecRecord.from_json(kv[protocol.KV_EXEC_RECORD_PREFIX + session.id])
    assert (record.task, record.argv, record.exit_code, record.tty) == (TASK, ("true",), 0, False)
    events = Events()
    events.execs(kv.get_prefix(protocol.KV_PREFIX), {TASK: "node1"})
    events.execs(kv.get_prefix(protocol.KV_PREFIX), {TASK: "node1"})  # each once, however often the AM looks
    got = [(e.kind, e.task, e.host, e.message) for e in events.recent()]
    assert got == [(EXEC, TASK, "node1", f"{record.user} ran `true` in {TASK}"),
                   (EXEC, TASK, "node1", f"{record.user}'s exec in {TASK} ended with exit code 0 (`true`)")]


def test_an_exec_ends_with_its_task_and_leaves_no_process(agent, tmp_path):  # type: ignore[no-untyped-def]
    marker = tmp_path / "pid"
    result: dict[str, Any] = {}

    def client() -> None:
        result["run"] = run(agent, "sh", "-c", f"echo $$ > {marker}; exec sleep 600")

    t = threading.Thread(target=client)
    t.start()
    deadline = time.monotonic() + 10
    while not (marker.exists() and marker.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(marker.read_text())
    agent.stop()  # the task's command ended
    t.join(10)
    code, _, err, _ = result["run"]
    assert code == exit_code(-15) == 143
    assert b"the task's command ended" in err
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_the_task_ending_while_an_exec_starts_still_ends_that_exec(agent, monkeypatch):  # type: ignore[no-untyped-def]
    """CI saw stop() meet a session whose threads had not started yet (its start writes to the store first)."""
    from appmaster.executor import execagent

    original = execagent.Session.start
    starting = threading.Event()

    def slow_start(self):  # type: ignore[no-untyped-def]
        starting.set()
        time.sleep(0.5)
        original(self)

    monkeypatch.setattr(execagent.Session, "start", slow_start)
    result: dict[str, Any] = {}
    t = threading.Thread(target=lambda: result.update(run=run(agent, "sleep", "600")))
    t.start()
    assert starting.wait(10)
    agent.stop()  # mid-start: waits for the session to have started, then ends it
    t.join(15)
    code, _, err, _ = result["run"]
    assert code == exit_code(-15) and b"the task's command ended" in err


def test_a_request_after_the_task_ended_gets_no_answer_and_says_why(agent, monkeypatch):  # type: ignore[no-untyped-def]
    agent.stop()
    monkeypatch.setattr(protocol, "EXEC_ANSWER_S", 1)
    with pytest.raises(TfyarnError, match="did not answer within 1 s"):
        run(agent, "true")


# -- the client's checks before any request --------------------------------------------------------------
def _report(state: JobState, user: str = "alice") -> JobReport:
    return JobReport(app_id="application_1_0001", name="j", state=state, yarn_state=state.value, final_status="",
                     diagnostics="", tracking_url="", queue="default", user=user, start_time_ms=0, finish_time_ms=0)


class _Client:
    def __init__(self, rep: JobReport, tasks: dict[str, TaskState] | None):
        self.rep, self.tasks = rep, tasks

    def report(self, app_id: str) -> JobReport:
        return self.rep

    def live_doc(self, rep: JobReport) -> Any:
        if self.tasks is None:
            return None
        return SimpleNamespace(tasks=[SimpleNamespace(name=n, state=s) for n, s in self.tasks.items()])


@pytest.mark.parametrize("rep, tasks, task, message", [
    (_report(JobState.SUCCEEDED), {}, TASK, "has ended (SUCCEEDED): tfyarn exec reaches the tasks of a running job"),
    (_report(JobState.RUNNING, user="bob"), {}, TASK, "only application_1_0001's owner (bob) can exec"),
    (_report(JobState.RUNNING), None, TASK, "AM has not started serving yet"),
    (_report(JobState.RUNNING), {"worker:0": TaskState.RUNNING}, "chief:0",
     "has no task chief:0: its tasks are worker:0"),
    (_report(JobState.RUNNING), {TASK: TaskState.SUCCEEDED}, TASK, "task worker:1 is SUCCEEDED, not running"),
    (_report(JobState.RUNNING), {TASK: TaskState.REQUESTED}, TASK, "task worker:1 is REQUESTED, not running"),
])
def test_preflight_refuses_with_the_reason(monkeypatch, rep, tasks, task, message):  # type: ignore[no-untyped-def]
    monkeypatch.setenv(protocol.ENV_HADOOP_USER_NAME, "alice")
    monkeypatch.delenv(protocol.ENV_HADOOP_CONF_DIR, raising=False)
    with pytest.raises(TfyarnError, match=message.replace("(", r"\(").replace(")", r"\)")):
        preflight(_Client(rep, tasks), ExecOptions("application_1_0001", task, ("true",)))


def test_preflight_passes_a_running_task_of_ones_own_job(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv(protocol.ENV_HADOOP_USER_NAME, "alice")
    monkeypatch.delenv(protocol.ENV_HADOOP_CONF_DIR, raising=False)
    client = _Client(_report(JobState.RUNNING), {TASK: TaskState.RUNNING})
    preflight(client, ExecOptions("application_1_0001", TASK, ("true",)))


def test_when_the_tasks_command_ends_its_execs_end_first_with_their_own_exit_code(tmp_path):  # type: ignore[no-untyped-def]
    """process.run's clean-up of the command's leftovers must not reap an exec (its code would read 0):
    the agent's stop runs first, ends each session itself, and the client hears why."""
    from appmaster.executor import process

    stop = process.StopSignals()
    app = SimpleNamespace(kv=FakeKV())
    a = ExecAgent(app, TASK, dict(os.environ), str(tmp_path), keep=stop.keep)
    stop.before_stop.append(a.stop)
    a.start()
    result: dict[str, Any] = {}
    client = threading.Thread(target=lambda: result.setdefault("run", run(a, "sleep", "600")))
    client.start()
    deadline = time.monotonic() + 10
    while not stop.keep and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stop.keep, "the session's process was not handed to the executor's keep set"
    outcome = process.run(["sleep", "0.5"], dict(os.environ), stop)  # the task's command, then its clean-up
    client.join(10)
    code, _, err, _ = result["run"]
    assert outcome.exit_code == 0
    assert code == 143 and b"the task's command ended" in err, (code, err)
    assert stop.keep == set()
