"""tfyarn from Python: submit a 2-worker job, follow it to its end, read its status (README, "Python API").

    tfyarn cluster up                # or HADOOP_CONF_DIR pointing at a cluster
    python examples/python_api.py    # exit 0 when the job SUCCEEDED

Ctrl-C while it waits kills the job (the CLI's `tfyarn wait` would leave it running).
"""

from __future__ import annotations

import sys

from tfyarn import Client, JobSpec, RoleSpec

HELLO = "import os; print('hello from', os.environ['TFYARN_ROLE'], os.environ['TFYARN_TASK_INDEX'])"


def main() -> int:
    # The same job as `tfyarn submit --num-workers 2 --worker-memory 512m -- python -c ...`; from a YAML job
    # file and flags it is tfyarn.load_job("job.yaml", flags={"num_workers": 2}, command=[...]).
    spec = JobSpec(
        name="python-api-hello",
        command=("python", "-c", HELLO),
        roles={"worker": RoleSpec("worker", instances=2, memory_mb=512)},
    ).validate()
    with Client() as client:
        app_id = client.submit(spec, progress=print)
        print(f"Submitted {app_id}")
        try:
            final = client.wait(app_id, progress=lambda line: print(line, file=sys.stderr))
        except KeyboardInterrupt:
            client.kill(app_id)
            print(f"Killed {app_id}", file=sys.stderr)
            return 130
        print(f"{app_id} {final.state.value}: {final.diagnostics}")
        doc = client.status_doc(app_id)  # the AM's last status: every task, where it ran, how it ended
        for task in doc.tasks if doc else ():
            print(f"  {task.name} on {task.host}: {task.state.value} (exit code {task.exit_code})")
    return 0 if final.state.value == "SUCCEEDED" else 1


if __name__ == "__main__":
    sys.exit(main())
