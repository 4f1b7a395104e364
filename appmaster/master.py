"""tfyarn's ApplicationMaster: the Python side of the AM container.

skein's Java AM handles YARN's protocol; this script, run as its master
script, decides everything job-specific: it asks for one container per
task, publishes the cluster view once every task has registered (gang
start), follows the tasks, stops the ones still running when the job is
decided, and ends the application with the job's real outcome. It never
lets the application end SUCCEEDED unless the job's rules say so.
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback
from typing import Any

import skein

from appmaster.staging import StagingPlan
from appmaster.tasks import TaskTable
from tfyarn import protocol
from tfyarn.spec import JobSpec
from tfyarn.status import TaskState

POLL_S = 0.25
_ALL_STATES = ["WAITING", "REQUESTED", "RUNNING", "SUCCEEDED", "FAILED", "KILLED"]


def staging_plan(job: JobSpec, role: str, index: int) -> StagingPlan:
    """What one task downloads and publishes: all inputs (workers' sharded ones in slices), its outputs."""
    mine = protocol.task_name(role, index)
    return StagingPlan(
        inputs=tuple({"src": i.src, "dest": i.local_dir, "mode": i.mode} for i in job.inputs),
        shard=(index, job.count("worker")) if role == "worker" else None,
        outputs=tuple({"src": o.src, "dest": o.dest} for o in job.outputs if job.output_task(o) == mine),
        overwrite=job.overwrite, download_threads=job.download_threads, upload_threads=job.upload_threads,
        save_every=job.save_every,
    )


def request_containers(app: skein.ApplicationClient, job: JobSpec, table: TaskTable) -> None:
    for task in table.tasks:
        role = job.roles[task.role]
        env = {
            protocol.ENV_ROLE: task.role,
            protocol.ENV_TASK_INDEX: str(task.index),
            protocol.ENV_NUM_TASKS: str(role.instances),
            protocol.ENV_COMMAND: protocol.encode_env(list(job.command_for(task.role))),
            protocol.ENV_APP_ID: app.id,
            protocol.ENV_FRAMEWORK: job.framework,
            protocol.ENV_NPROC_PER_NODE: str(role.processes),
            protocol.ENV_STAGING: staging_plan(job, task.role, task.index).to_env(),
        }
        container = app.add_container(task.role, env=env)
        task.container_id = container.id
        task.state = TaskState.REQUESTED


def sync(app: skein.ApplicationClient, table: TaskTable) -> None:
    """Fold skein's container states, registrations and exit records into the table.

    An exit record decides a task as soon as the executor writes it, seconds
    before YARN reports the container finished; a container that ended
    without one (killed, lost, out of memory) is decided by YARN's state.
    """
    kv = app.kv.get_prefix(protocol.KV_PREFIX)
    by_container = {t.container_id: t for t in table.tasks}  # one lookup per container, not a scan
    for c in app.get_containers(states=_ALL_STATES):
        task = by_container.get(c.id)
        if task is None or task.state.is_terminal():
            continue
        task.yarn_container_id = c.yarn_container_id or ""
        task.node_http_address = c.yarn_node_http_address or ""
        task.host = task.node_http_address.rsplit(":", 1)[0]
        task.state = TaskState(str(c.state))
        if task.state.is_terminal():
            task.exit_message = c.exit_message or ""
    for task in table.tasks:
        reg = kv.get(protocol.kv_task_addr(task.role, task.index))
        if reg and not task.address:
            record = json.loads(reg)
            task.address, task.staging_s = record["address"], record["staging_s"]
        raw = kv.get(protocol.kv_task_exit(task.role, task.index))
        if raw and task.exit_code is None:
            record = json.loads(raw)
            task.exit_code = int(record["code"])
            task.stderr_tail = record.get("stderr_tail", "")
            task.state = TaskState.SUCCEEDED if task.exit_code == 0 else TaskState.FAILED


def status_doc(app_id: str, job: JobSpec, table: TaskTable, state: str, diagnostics: str = "") -> dict[str, Any]:
    """The job's status as data: what `tfyarn status` shows per task."""
    return {"app_id": app_id, "name": job.name, "framework": job.framework, "state": state,
            "diagnostics": diagnostics, "time": time.time(), "tasks": [t.to_dict() for t in table.tasks],
            "outputs": [{"src": o.src, "dest": o.dest, "task": job.output_task(o)} for o in job.outputs]}


def run(app: skein.ApplicationClient, job: JobSpec) -> tuple[str, str, TaskTable]:
    table = TaskTable.for_job(job)
    request_containers(app, job, table)
    print(f"tfyarn AM: requested {len(table.tasks)} container(s) for job {job.name!r}", flush=True)
    published, last = False, ""
    while (outcome := table.outcome()) is None:
        time.sleep(POLL_S)
        sync(app, table)
        if not published and table.all_registered():
            app.kv[protocol.KV_CLUSTER] = json.dumps(table.cluster_view()).encode()
            published = True
            print(f"tfyarn AM: all {len(table.tasks)} task(s) registered; cluster view published", flush=True)
        doc = status_doc(app.id, job, table, "RUNNING")
        tasks = json.dumps(doc["tasks"])
        if tasks != last:  # republish only when a task changed, not every poll
            app.kv[protocol.KV_STATUS] = json.dumps(doc).encode()
            last = tasks
    # Decided: whatever still runs (parameter servers, evaluator, the rest after a failure) is stopped.
    for t in table.tasks:
        if not t.state.is_terminal() and t.container_id:
            app.kill_container(t.container_id)
            t.state = TaskState.KILLED if t.exit_code is None else t.state
    return (*outcome, table)


def main() -> int:
    app = skein.ApplicationClient.from_current()
    job: JobSpec | None = None
    table = TaskTable()
    try:
        job = JobSpec.from_dict(protocol.decode_env(os.environ[protocol.ENV_JOB]))
        status, diagnostics, table = run(app, job)
    except Exception as e:  # the job must end FAILED, never hang or claim success
        traceback.print_exc()
        status, diagnostics = "FAILED", f"tfyarn AM error: {type(e).__name__}: {e}"
    print(f"tfyarn AM: job {status}: {diagnostics}", flush=True)
    if job is not None:
        doc = status_doc(app.id, job, table, status, diagnostics)
        app.kv[protocol.KV_STATUS] = json.dumps(doc).encode()
        # Kept in the AM's aggregated log: `tfyarn status` reads it after the job ends.
        print(protocol.AM_STATUS_LINE + json.dumps(doc), flush=True)
    app.shutdown(status, diagnostics)
    return 0 if status == "SUCCEEDED" else 1


if __name__ == "__main__":
    sys.exit(main())
