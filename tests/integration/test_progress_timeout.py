"""--progress-timeout on the real cluster: a task that stalls after its first step is stopped, restarted
by its policy, and, stalling again, fails the job with a line naming it; nothing of the job is left."""
from __future__ import annotations

import json
import time

from tests.integration.conftest import status_json, tfyarn
from tests.integration.procs import wait_none_left

# worker:1 stalls after its first step (a hung collective, say); worker:0 keeps training.
SCRIPT = """
import os, time
import tfyarn.report as report
rank = int(os.environ["TFYARN_TASK_INDEX"])
report.first_step()
report.progress(1, loss=0.5)
print(f"rank {rank}: step 1", flush=True)
for step in range(2, 100000):
    if rank == 1:
        time.sleep(600)
    time.sleep(0.5)
    report.progress(step)
"""


def test_a_stalled_task_is_stopped_restarted_and_then_fails_the_job_naming_it(cluster, yarn_apps):
    t0 = time.monotonic()
    res = tfyarn("submit", "--name", "progress-timeout", "--num-workers", "2", "--worker-memory", "256m",
                 "--progress-timeout", "15s", "--worker-restart", "on-failure", "--worker-max-restarts", "1",
                 "--worker-restart-backoff", "0", "--wait", "--json", "--", "python", "-c", SCRIPT, timeout=400)
    elapsed = time.monotonic() - t0
    out = json.loads(res.stdout)
    yarn_apps.append(out["app_id"])
    assert res.returncode == 4, res.stderr
    assert out["state"] == "FAILED"
    diag = out["diagnostics"]
    assert f"task worker:1 failed (exit code 123) on " in diag and "after 1 restart(s)" in diag, diag
    assert ("tfyarn: worker:1 made no progress for 15 s (--progress-timeout): its last progress was "
            "tfyarn.report.progress() at step 1, at ") in diag, diag
    assert elapsed < 240, elapsed  # two stalls of 15 s, not the sleep's 600
    tasks = {t["name"]: t for t in status_json(out["app_id"])["tasks"]}
    assert tasks["worker:1"]["restarts"] == 1 and "(exit code 123)" in tasks["worker:1"]["history"][0], tasks
    assert tasks["worker:0"]["restarts"] == 0, tasks  # its peer kept training, untouched
    beat = tasks["worker:0"]["progress"]  # its heartbeats, forwarded to the AM and kept in status.json
    assert beat["step"] > 10 and beat["metrics"] == {"loss": 0.5} and beat["series"] == {"loss": [0.5]}, beat
    assert wait_none_left(out["app_id"]) == []
