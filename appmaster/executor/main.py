"""The executor: the first process of every task container.

Its life reads top to bottom: learn who it is, stage its inputs, reserve a
port and register it with the AM, wait until every task of the job has
registered (gang), build the framework's environment, release the port,
run the user's command, publish its outputs, report how it ended, exit
with the command's code.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import queue
import socket
import sys
import threading
import time
from typing import Any

import skein

from appmaster.executor import dockertask, gpus, process
from appmaster.executor.execagent import ExecAgent
from appmaster.executor.monitor import Monitor, Timeline
from appmaster.executor.restore import restore_outputs
from appmaster.executor.staging import publish_outputs, publish_snapshot, stage_inputs
from appmaster.executor.threads import thread_env
from appmaster.executor.watchdog import Watchdog
from tfyarn import frameworks, logfmt, nodegpus, protocol, renewal, taskenv, wire
from tfyarn.frameworks.base import Elastic
from tfyarn.frameworks.pytorch import rendezvous_endpoint
from tfyarn.spec import JobSpec
from tfyarn.taskenv import StagingPlan

log = logging.getLogger(logfmt.EXECUTOR_LOGGER)


def reserve_port(previous: str = "") -> socket.socket:
    """Bind a port and hold it until the user process needs it.

    SO_REUSEPORT lets a TensorFlow server (gRPC sets it too) bind the same
    port while we still hold it, so nothing can take it in between; for
    other frameworks the socket is closed right before the command starts.
    A restarted task first tries its old port (``previous``, when on this
    host), so the peers that know its old address reach it again.
    """
    host, _, port = previous.rpartition(":")
    wanted = [int(port)] if previous and host == advertised_host() and port.isdigit() else []
    for candidate in [*wanted, 0]:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if hasattr(socket, "SO_REUSEPORT"):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            sock.bind(("", candidate))
            return sock
        except OSError:
            sock.close()
    raise OSError("no free port")


def advertised_host() -> str:
    """The name other containers reach this one by: the NodeManager's host."""
    return os.environ.get(protocol.ENV_NM_HOST) or socket.getfqdn()


def user_env(environ: dict[str, str]) -> dict[str, str]:
    """The job's ``--env`` settings, which travel encoded (never through YARN's launch script)."""
    encoded = environ.get(protocol.ENV_USER_ENV)
    return dict(protocol.decode_env(encoded)) if encoded else {}


# Its sitecustomize makes every Python process of the task line-buffered (why: in that module).
STDIO_HOOK_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stdio")


def task_env(base: dict[str, str], extra: dict[str, str]) -> dict[str, str]:
    """The user process's environment: ``base``, this Python's bin first on PATH, plus ``extra``;
    the stdio hook first on PYTHONPATH, before any the job sets."""
    env = {**base, **extra}
    env["PATH"] = f"{os.path.dirname(sys.executable)}:{base.get('PATH', '')}"
    pythonpath = env.get(protocol.ENV_PYTHONPATH)
    env[protocol.ENV_PYTHONPATH] = f"{STDIO_HOOK_DIR}:{pythonpath}" if pythonpath else STDIO_HOOK_DIR
    return env


def link_code(workdir: str) -> None:
    """Make the shipped --code dir's entries appear in the task's dir, where the command runs."""
    code = os.path.join(workdir, protocol.CODE_DIR)
    if os.path.isdir(code):
        for name in os.listdir(code):
            link = os.path.join(workdir, name)
            if not os.path.lexists(link):
                os.symlink(os.path.join(code, name), link)


def container_id() -> str:
    return os.environ.get(protocol.ENV_YARN_CONTAINER_ID, "")


def report_exit(app: skein.ApplicationClient, role: str, index: int, outcome: process.Outcome) -> int:
    """The exit record the AM decides on, then the code to exit with."""
    record = wire.ExitRecord(
        code=outcome.exit_code, stderr_tail=outcome.stderr_tail, time=time.time(), container=container_id()
    )
    app.kv[protocol.kv_task_exit(role, index)] = record.to_json().encode()
    (log.info if outcome.exit_code == 0 else log.error)(
        f"{protocol.task_name(role, index)} exited with code {outcome.exit_code}"
    )
    return outcome.exit_code


def snapshots(app: skein.ApplicationClient, staging: StagingPlan, workdir: str, role: str, index: int) -> None:
    """Background: publish an output snapshot every save_every seconds and on each `tfyarn save`.

    If the AM's event stream fails (the AM is gone), on-demand snapshots end
    with a line saying so; the timer goes on, never as a hot loop.
    """
    requests: Any = app.kv.events(key=protocol.KV_SAVE, event_type="PUT")
    while True:
        if requests is None:
            if not staging.save_every:
                return
            time.sleep(staging.save_every)
        else:
            try:
                requests.get(timeout=staging.save_every or None)
            except queue.Empty:  # the save_every timer
                pass
            except Exception as e:  # the stream failed: it would re-raise at once, forever
                log.warning(f"`tfyarn save` requests no longer reach this task ({type(e).__name__}: {e})")
                requests = None
                continue
        try:
            renewal.refresh(app, workdir)
            uris = publish_snapshot(staging, workdir, app.id)
            record = wire.SnapshotRecord(uris=tuple(uris), time=time.time())
            app.kv[protocol.kv_task_snapshot(role, index)] = record.to_json().encode()
        except Exception as e:  # a failed snapshot must not kill training
            log.warning(f"snapshot failed: {type(e).__name__}: {e}")


def own_gpus() -> tuple[tuple[int, ...] | None, str]:
    """Devices YARN or Docker bound to this container and who did, for the registration; (None, ""): the AM binds."""
    env = dict(os.environ)
    if env.get(protocol.ENV_NM_HOST) and env.get(protocol.ENV_NM_HTTP_PORT):
        info = nodegpus.node_gpu_info(f"{env[protocol.ENV_NM_HOST]}:{env[protocol.ENV_NM_HTTP_PORT]}")
        found = nodegpus.yarn_assigned(info, env.get(protocol.ENV_YARN_CONTAINER_ID, ""))
        if found is not None:
            return tuple(found), "yarn"
    found = gpus.docker_assigned(env)
    return (tuple(found), "docker") if found is not None else (None, "")


def main() -> int:
    started = time.time()  # YARN localized the container's files before starting us
    logfmt.setup(logfmt.EXECUTOR_LOGGER)
    stop = process.StopSignals().install()
    os.environ.update(taskenv.from_container(dict(os.environ)))  # one of the gang's first containers
    role = os.environ[protocol.ENV_ROLE]
    index = int(os.environ[protocol.ENV_TASK_INDEX])
    app = skein.ApplicationClient.from_current()
    try:
        return run_task(app, role, index, started, stop)
    except process.Terminated as e:  # told to stop outside the command's run: nothing is published
        log.warning(f"{protocol.task_name(role, index)} stopped by signal {e.signum}; nothing was published")
        return report_exit(app, role, index, process.Outcome(e.exit_code, str(e), e.signum))


def run_task(app: skein.ApplicationClient, role: str, index: int, started: float, stop: process.StopSignals) -> int:
    """One task's life, from its inputs to its published outputs; returns the code to exit with."""
    framework = frameworks.get(os.environ.get(protocol.ENV_FRAMEWORK, "none"))
    nproc = int(os.environ.get(protocol.ENV_NPROC_PER_NODE, "1"))
    command = protocol.decode_env(os.environ[protocol.ENV_COMMAND])
    tb_uri = os.environ.get(protocol.ENV_TENSORBOARD_URI, "")
    name = protocol.task_name(role, index)
    timeline = Timeline(app, role, index)
    timeline.stamp("localized", started)
    staging = StagingPlan.from_env(os.environ.get(protocol.ENV_STAGING))
    workdir = os.getcwd()
    link_code(workdir)
    try:
        if staging.inputs or staging.outputs:  # a restart after the job's first token expired: the AM's newest
            renewal.refresh(app, workdir)
        input_env, staging_s, staging_bytes = stage_inputs(staging, workdir)
    except Exception as e:  # the command never runs on partial data
        msg = f"staging inputs failed: {type(e).__name__}: {e}"
        log.error(msg)
        return report_exit(app, role, index, process.Outcome(protocol.EXIT_STAGING_FAILED, msg))
    timeline.stamp("inputs_staged")
    try:  # a restarted output task: this job's latest snapshot, so training resumes
        if restore_outputs(staging, workdir, app.id):
            timeline.stamp(protocol.STAGE_RESTORED)
    except Exception as e:  # never silently train from scratch
        msg = f"restoring the latest snapshot failed (--no-resume starts over instead): {type(e).__name__}: {e}"
        log.error(msg)
        return report_exit(app, role, index, process.Outcome(protocol.EXIT_STAGING_FAILED, msg))

    sock = reserve_port(os.environ.get(protocol.ENV_PREVIOUS_ADDRESS, ""))
    address = f"{advertised_host()}:{sock.getsockname()[1]}"
    bound, binding = own_gpus()
    registration = wire.Registration(
        address=address,
        staging_s=staging_s,
        staging_bytes=staging_bytes,
        container=container_id(),
        gpus=bound,
        gpu_binding=binding,
    )
    app.kv[protocol.kv_task_addr(role, index)] = registration.to_json().encode()
    timeline.stamp("registered")
    log.info(f"{name} registered {address}; waiting for the other tasks")
    view = wire.ClusterView.from_json(app.kv.wait(protocol.KV_CLUSTER)).roles
    timeline.stamp("rendezvous")
    assigned = app.kv.wait(protocol.kv_task_gpus(role, index))  # the AM binds before the gang
    devices = list(wire.GpuAssignment.from_json(assigned).gpus)

    base = {**os.environ, **user_env(dict(os.environ))}
    events_file = os.path.join(workdir, ".tfyarn-events")
    in_docker = os.environ.get(protocol.ENV_DOCKER_RUNTIME) == "executor"
    elastic = Elastic.from_env(os.environ.get(protocol.ENV_ELASTIC))
    if elastic:
        endpoint = rendezvous_endpoint(view)
        elastic = dataclasses.replace(elastic, endpoint=endpoint, local_addr=advertised_host(), report=not in_docker)
    extra = {
        **input_env,
        **framework.task_env(role, index, view, nproc, elastic),
        **thread_env(base, nproc),
        **gpus.cuda_env(devices),
        protocol.ENV_EVENTS: events_file,
    }
    tb_dir = os.path.join(workdir, protocol.TENSORBOARD_SUBDIR)
    if tb_uri:
        os.makedirs(tb_dir, exist_ok=True)
        extra[protocol.ENV_TENSORBOARD_DIR] = tb_dir
    command = framework.wrap_command(command, index, view, nproc, app.id, elastic)
    if framework.releases_port_before_command:  # else held until the command exits (TF binds it too)
        sock.close()
    log.info(f"{name} at {address} on GPU(s) [{','.join(map(str, devices))}] runs: {' '.join(command)}")
    if staging.outputs:
        threading.Thread(target=snapshots, args=(app, staging, workdir, role, index), daemon=True).start()
    monitor = Monitor(app, role, index, timeline, events_file, devices, tb_dir, tb_uri)
    monitor.start()
    env = task_env(base, extra)
    box = ""
    if in_docker:
        try:
            command, env, box = _docker(role, command, env, {*extra, *user_env(dict(os.environ))}, devices, workdir)
        except dockertask.DockerMissing as e:
            log.error(str(e))
            return report_exit(app, role, index, process.Outcome(protocol.EXIT_COMMAND_NOT_FOUND, f"tfyarn: {e}"))
    timeline.stamp("process_started")
    watchdog = None
    if timeout := int(os.environ.get(protocol.ENV_PROGRESS_TIMEOUT, "0") or 0):
        watchdog = Watchdog(name, timeout, monitor, stop)
        watchdog.start()
    agent = ExecAgent(app, name, env, workdir, box, keep=stop.keep)  # `tfyarn exec` while it runs
    stop.before_stop.append(agent.stop)  # its sessions end, saying why, before the task's processes are stopped
    agent.start()
    try:
        outcome = process.run(command, env, stop, on_output=watchdog.saw_output if watchdog else None)
    finally:
        agent.stop()
    if watchdog:
        outcome = watchdog.finish(outcome)
    if in_docker:
        dockertask.remove(box)
        outcome = _explained(outcome, role)
    sock.close()
    monitor.finish()
    if outcome.stop_signal:
        log.warning(
            f"{name} was stopped by signal {outcome.stop_signal} while its command ran; its outputs are not published"
        )
    elif outcome.exit_code == 0 and staging.outputs:
        try:
            renewal.refresh(app, workdir)
            publish_outputs(staging, workdir, app.id)
        except Exception as e:
            msg = f"publishing outputs failed: {type(e).__name__}: {e}"
            log.error(msg)
            outcome = process.Outcome(protocol.EXIT_OUTPUT_FAILED, msg)
    return report_exit(app, role, index, outcome)


@functools.cache
def _job() -> JobSpec:
    """The job's spec, decoded once (only a Docker task needs it whole)."""
    return JobSpec.from_dict(protocol.decode_env(os.environ[protocol.ENV_JOB]))


def _docker(
    role: str, command: list[str], env: dict[str, str], computed: set[str], devices: list[int], workdir: str
) -> tuple[list[str], dict[str, str], str]:
    """The command in `docker run` of the role's image (the executor runtime), guarded against leftovers."""
    spec = _job()
    argv, docker_env, box = dockertask.prepare(spec, role, command, env, computed, devices, workdir, container_id())
    dockertask.guard(box)
    log.info(
        f"{protocol.task_name(role, int(os.environ[protocol.ENV_TASK_INDEX]))} runs in Docker image "
        f"{spec.image_for(role)} as container {box}"
    )
    return argv, docker_env, box


def _explained(outcome: process.Outcome, role: str) -> process.Outcome:
    """Docker's own exit codes (125-127) get a line saying so, first in the stderr tail."""
    why = "" if outcome.stop_signal else dockertask.explain(outcome.exit_code, _job().image_for(role))
    if not why:
        return outcome
    log.error(why)
    return process.Outcome(outcome.exit_code, f"tfyarn: {why}\n{outcome.stderr_tail}", outcome.stop_signal)


if __name__ == "__main__":
    sys.exit(main())
