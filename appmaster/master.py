"""tfyarn's ApplicationMaster: the Python side of the AM container.

skein's Java AM handles YARN's protocol; this script, run as its master
script, decides everything job-specific: it asks for one container per
task, follows them, and ends the application with the job's real outcome.
It never lets the application end SUCCEEDED unless every task did.
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback

import skein

from appmaster.tasks import TaskTable
from tfyarn import protocol
from tfyarn.spec import JobSpec
from tfyarn.status import TaskState

POLL_S = 0.5
_ALL_STATES = ["WAITING", "REQUESTED", "RUNNING", "SUCCEEDED", "FAILED", "KILLED"]


def request_containers(app: skein.ApplicationClient, job: JobSpec, table: TaskTable) -> None:
    for task in table.tasks:
        role = job.roles[task.role]
        env = {
            protocol.ENV_ROLE: task.role,
            protocol.ENV_TASK_INDEX: str(task.index),
            protocol.ENV_NUM_TASKS: str(role.instances),
            protocol.ENV_COMMAND: protocol.encode_env(list(role.command or job.command)),
            protocol.ENV_APP_ID: app.id,
        }
        container = app.add_container(task.role, env=env)
        task.container_id = container.id
        task.state = TaskState.REQUESTED


def sync(app: skein.ApplicationClient, table: TaskTable) -> None:
    """Fold skein's container states and the executors' exit records into the table.

    An exit record decides a task as soon as the executor writes it, seconds
    before YARN reports the container finished; a container that ended
    without one (killed, lost, out of memory) is decided by YARN's state.
    """
    exits = app.kv.get_prefix(protocol.KV_EXIT_PREFIX)
    for c in app.get_containers(states=_ALL_STATES):
        task = table.by_container(c.id)
        if task is None or task.state.is_terminal():
            continue
        task.yarn_container_id = c.yarn_container_id or ""
        task.host = (c.yarn_node_http_address or "").rsplit(":", 1)[0]
        task.state = TaskState(str(c.state))
        if task.state.is_terminal():
            task.exit_message = c.exit_message or ""
    for task in table.tasks:
        raw = exits.get(protocol.kv_task_exit(task.role, task.index))
        if raw and task.exit_code is None:
            record = json.loads(raw)
            task.exit_code = int(record["code"])
            task.stderr_tail = record.get("stderr_tail", "")
            task.state = TaskState.SUCCEEDED if task.exit_code == 0 else TaskState.FAILED


def run(app: skein.ApplicationClient, job: JobSpec) -> tuple[str, str]:
    table = TaskTable.for_job(job)
    request_containers(app, job, table)
    print(f"tfyarn AM: requested {len(table.tasks)} container(s) for job {job.name!r}", flush=True)
    while (outcome := table.outcome()) is None:
        time.sleep(POLL_S)
        sync(app, table)
    status, _ = outcome
    if status != "SUCCEEDED":
        for t in table.tasks:
            if not t.state.is_terminal() and t.container_id:
                app.kill_container(t.container_id)
    return outcome


def main() -> int:
    app = skein.ApplicationClient.from_current()
    try:
        job = JobSpec.from_dict(protocol.decode_env(os.environ[protocol.ENV_JOB]))
        status, diagnostics = run(app, job)
    except Exception as e:  # the job must end FAILED, never hang or claim success
        traceback.print_exc()
        status, diagnostics = "FAILED", f"tfyarn AM error: {type(e).__name__}: {e}"
    print(f"tfyarn AM: job {status}: {diagnostics}", flush=True)
    app.shutdown(status, diagnostics)
    return 0 if status == "SUCCEEDED" else 1


if __name__ == "__main__":
    sys.exit(main())
