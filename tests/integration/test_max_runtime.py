"""--max-runtime on the real cluster: a job that would hang ends FAILED at its limit, nothing of it left."""
from __future__ import annotations

import json
import time

from tests.integration.conftest import status_json, tfyarn
from tests.integration.procs import wait_none_left


def test_a_job_past_its_max_runtime_fails_and_leaves_no_process(cluster, yarn_apps):
    t0 = time.monotonic()
    res = tfyarn("submit", "--name", "max-runtime", "--num-workers", "2", "--worker-memory", "256m",
                 "--max-runtime", "20s", "--wait", "--json", "--", "python", "-c", "import time; time.sleep(600)",
                 timeout=300)
    elapsed = time.monotonic() - t0
    out = json.loads(res.stdout)
    yarn_apps.append(out["app_id"])
    assert res.returncode == 4, res.stderr
    assert out["state"] == "FAILED"
    assert "ran past its maximum runtime of 20s (max_runtime_s 20, --max-runtime)" in out["diagnostics"], out
    assert "still running: worker:0, worker:1" in out["diagnostics"], out
    assert elapsed < 120, elapsed  # stopped at its limit, not at the sleep's end
    assert {t["state"] for t in status_json(out["app_id"])["tasks"]} == {"KILLED"}
    assert wait_none_left(out["app_id"]) == []
