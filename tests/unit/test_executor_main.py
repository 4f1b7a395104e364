"""The executor's main path in-process, against the in-memory skein stand-in, with real user commands.

The test plays the AM (or runs its real loop): it reads the executor's
registration and publishes the cluster view and the task's devices with the
wire module's types, so both sides of every record are the real code.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from appmaster.am import master
from appmaster.am.tasks import TaskTable
from appmaster.executor import main as executor
from appmaster.executor import process
from tests.fakes import FakeApp, FakeStatusServer
from tests.waiting import Background, wait_until
from tfyarn import protocol, taskenv, wire
from tfyarn.spec import JobSpec, RoleSpec

YARN_ID = "container_1_0001_01_000003"
DUMP_ENV = "import json, os; json.dump(dict(os.environ), open('env.json', 'w'))"


@pytest.fixture(autouse=True)
def container(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApp]:
    """A task container's surroundings: its dir, skein's client, YARN's variables; restored afterwards."""
    saved_env = dict(os.environ)
    saved_handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    logger = logging.getLogger("tfyarn")  # main sets it up as in a container: its own stderr handler
    saved_logging = (logger.handlers[:], logger.propagate, logger.level)
    app = FakeApp()
    app.kv.wait_limit_s = 15
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(executor.skein.ApplicationClient, "from_current", staticmethod(lambda: app))
    # The test process must not become a subreaper for the rest of the session (test_process covers it).
    monkeypatch.setattr(process, "become_subreaper", lambda: False)
    for name in (protocol.ENV_ROLE, protocol.ENV_STAGING, protocol.ENV_TENSORBOARD_URI, protocol.ENV_USER_ENV,
                 protocol.ENV_PREVIOUS_ADDRESS, protocol.ENV_OMP_THREADS, "NM_HTTP_PORT", "NVIDIA_VISIBLE_DEVICES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CONTAINER_ID", YARN_ID)
    monkeypatch.setenv("NM_HOST", "node7")
    monkeypatch.setenv(protocol.ENV_SKEIN_VCORES, "4")
    yield app
    app.close()
    os.environ.clear()
    os.environ.update(saved_env)
    for sig, handler in saved_handlers.items():
        signal.signal(sig, handler)
    logger.handlers[:], logger.propagate = saved_logging[:2]
    logger.setLevel(saved_logging[2])


def job(framework: str = "none", command: tuple[str, ...] = ("python", "-c", DUMP_ENV), **roles: int) -> JobSpec:
    return JobSpec(name="j", command=command, framework=framework,
                   roles={r: RoleSpec(r, n) for r, n in roles.items()}).validate()


def as_task(monkeypatch: pytest.MonkeyPatch, spec: JobSpec, role: str, index: int) -> None:
    """The variables the AM gives a container it asks for (tfyarn.taskenv, its own builder)."""
    for name, value in taskenv.task_env(spec, role, index, "application_1_0001").items():
        monkeypatch.setenv(name, value)


def play_am(app: FakeApp, role: str, index: int, view: Callable[[str], dict[str, list[str]]],
            devices: tuple[int, ...] = ()) -> Background[wire.Registration]:
    """The AM's side for one task: once it registered and waits, its devices and the cluster view.

    Returns the registration. Before publishing, it checks the executor is
    really blocked on the view and its command has not started.
    """
    def am() -> wire.Registration:
        key = protocol.kv_task_addr(role, index)
        raw = wait_until(lambda: app.kv.get(key), what="the registration")
        assert raw is not None
        reg = wire.Registration.from_json(raw)
        wait_until(lambda: protocol.KV_CLUSTER in app.kv.waiting, what="the executor waiting for the view")
        assert not Path("env.json").exists() and protocol.kv_task_exit(role, index) not in app.kv
        app.kv[protocol.kv_task_gpus(role, index)] = wire.GpuAssignment(devices).to_json().encode()
        app.kv[protocol.KV_CLUSTER] = wire.ClusterView.of(view(reg.address)).to_json().encode()
        return reg
    return Background(am, name="AM")


def exit_record(app: FakeApp, role: str, index: int) -> wire.ExitRecord:
    return wire.ExitRecord.from_json(app.kv[protocol.kv_task_exit(role, index)])


def test_a_task_registers_waits_for_the_view_and_runs_its_command_with_the_framework_env(container, monkeypatch):
    spec = job("tensorflow", chief=1, worker=2)
    as_task(monkeypatch, spec, "worker", 1)
    am = play_am(container, "worker", 1, lambda me: {"chief": ["c:1"], "worker": ["w0:1", me]}, devices=(2, 3))
    assert executor.main() == 0
    reg = am.result()
    assert reg.address.startswith("node7:") and reg.container == YARN_ID and reg.gpus is None
    env = json.loads(Path("env.json").read_text())
    assert json.loads(env["TF_CONFIG"]) == {"cluster": {"chief": ["c:1"], "worker": ["w0:1", reg.address]},
                                            "task": {"type": "worker", "index": 1}}
    assert (env["CUDA_VISIBLE_DEVICES"], env[protocol.ENV_GPUS], env[protocol.ENV_OMP_THREADS]) == ("2,3", "2,3", "4")
    assert Path(env[protocol.ENV_EVENTS]).parent == Path.cwd()
    record = exit_record(container, "worker", 1)
    assert (record.code, record.container) == (0, YARN_ID)
    stages = wire.EventsRecord.from_json(container.kv[protocol.kv_task_events("worker", 1)]).stages
    assert [s for s in ("registered", "rendezvous", "process_started") if s in stages] == [
        "registered", "rendezvous", "process_started"]
    assert stages["registered"] <= stages["rendezvous"] <= stages["process_started"]


def test_a_failing_command_reports_its_exit_code_and_the_tail_of_its_stderr(container, monkeypatch):
    fail = "import sys; print('loading', file=sys.stderr); print('ValueError: bad', file=sys.stderr); sys.exit(3)"
    spec = job(command=("python", "-c", fail), worker=1)
    as_task(monkeypatch, spec, "worker", 0)
    am = play_am(container, "worker", 0, lambda me: {"worker": [me]})
    assert executor.main() == 3 and am.result()
    record = exit_record(container, "worker", 0)
    assert record.code == 3 and record.stderr_tail.splitlines()[-2:] == ["loading", "ValueError: bad"]


def test_a_command_that_is_not_found_reports_127(container, monkeypatch):
    spec = job(command=("no-such-command-tfyarn",), worker=1)
    as_task(monkeypatch, spec, "worker", 0)
    am = play_am(container, "worker", 0, lambda me: {"worker": [me]})
    assert executor.main() == protocol.EXIT_COMMAND_NOT_FOUND and am.result()
    record = exit_record(container, "worker", 0)
    assert record.code == 127 and "no-such-command-tfyarn" in record.stderr_tail


def test_a_container_started_from_the_application_spec_learns_its_task_from_skein_s_container_id(
        container, monkeypatch):
    spec = job(worker=2)
    monkeypatch.setenv(protocol.ENV_SKEIN_CONTAINER_ID, "worker_1")
    monkeypatch.setenv(protocol.ENV_SKEIN_APP_ID, "application_1_0001")
    monkeypatch.setenv(protocol.ENV_JOB, protocol.encode_env(spec.to_dict()))
    am = play_am(container, "worker", 1, lambda me: {"worker": ["w0:1", me]})
    assert executor.main() == 0 and am.result()
    env = json.loads(Path("env.json").read_text())
    assert (env[protocol.ENV_ROLE], env[protocol.ENV_TASK_INDEX]) == ("worker", "1")
    assert exit_record(container, "worker", 1).code == 0


def test_the_executor_and_the_am_loop_agree_on_every_record(container, monkeypatch):
    """The real AM loop and the real executor, one task, in one process: from allocation to SUCCEEDED."""
    monkeypatch.setattr(master, "POLL_S", 0.005)
    monkeypatch.setattr(master, "STEADY_POLL_S", 0.005)
    spec = job(command=(sys.executable, "-c", "print('trained')"), worker=1)
    app = FakeApp.with_services({"worker": 1})
    monkeypatch.setattr(executor.skein.ApplicationClient, "from_current", staticmethod(lambda: app))
    table = TaskTable.for_job(spec)
    web: Any = FakeStatusServer()  # the AM's StatusServer, in memory
    am = Background(lambda: master.run(app, master.Job(app.id, spec, table, time.time()), web))
    app.allocate("worker_0", "node7:8042", yarn_container_id=YARN_ID)
    as_task(monkeypatch, spec, "worker", 0)
    try:
        assert executor.main() == 0
        assert am.result() == ("SUCCEEDED", "all 1 worker task(s) succeeded")
    finally:
        app.close()
    [task] = table.tasks
    registered = wire.Registration.from_json(app.kv[protocol.kv_task_addr("worker", 0)])
    assert (task.address, task.exit_code, task.yarn_container_id) == (registered.address, 0, YARN_ID)
    assert {"registered", "rendezvous", "process_started"} <= set(task.timeline)
