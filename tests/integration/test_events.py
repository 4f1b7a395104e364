"""Job events on the real cluster: a worker that fails once is restarted, and --on-event hears of it and of the end.

The worker fails on its first run only: it leaves a marker in $HOME (node 2's /tmp is private, $HOME is
seen by both nodes), so the restart succeeds wherever YARN places it. The hook prints each event, from its
stdin and from $TFYARN_EVENT, into the AM's log, which the test reads back through `tfyarn logs`.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from tests.integration.conftest import app_id_from, status_json, tfyarn, wait_for

MARKERS = Path.home() / ".tfyarn" / "test-markers"
FAIL_ONCE = """
import os, sys
marker = sys.argv[1]
if not os.path.exists(marker):
    open(marker, "w").close()
    print("first run: failing on purpose", file=sys.stderr)
    sys.exit(5)
print("second run: fine")
"""
STDIN, ENV, APP = "tfyarn-it-event-stdin: ", "tfyarn-it-event-env: ", "tfyarn-it-event-app: "
# One printf per line: the AM's own log lines share the file, and one write is not split by them.
HOOK = (
    f"printf '{STDIN}%s\\n' \"$(cat)\"; printf '{ENV}%s\\n' \"$TFYARN_EVENT\"; printf '{APP}%s\\n' \"$TFYARN_APP_ID\""
)


def hook_lines(log: str, prefix: str) -> list[str]:
    return [line[len(prefix) :] for line in log.splitlines() if line.startswith(prefix)]


def test_a_restart_and_the_job_end_reach_the_hook_and_the_status(cluster, yarn_apps):
    MARKERS.mkdir(parents=True, exist_ok=True)
    marker = MARKERS / f"events-{uuid.uuid4().hex}"
    try:
        res = tfyarn(
            "submit", "--framework", "none", "--num-workers", "1", "--worker-memory", "512m",
            "--worker-restart", "on-failure", "--worker-restart-backoff", "1", "--name", "it-events",
            "--on-event", HOOK, "--wait", "--", "python", "-c", FAIL_ONCE, str(marker),
            timeout=600,
        )  # fmt: skip
        app = app_id_from(res.stdout + res.stderr)
        yarn_apps.append(app)
        assert res.returncode == 0, res.stdout + res.stderr
        assert f"{app} SUCCEEDED: all 1 worker task(s) succeeded (1 task restart(s))" in res.stdout
    finally:
        marker.unlink(missing_ok=True)

    # `tfyarn status --json`: the events, typed fields and all
    doc = status_json(app)
    events: list[dict[str, Any]] = doc["events"]
    assert [e["kind"] for e in events] == ["task_restart", "job_end"], events
    restart, end = events
    assert set(restart) == {"kind", "time", "task", "host", "message"}
    assert restart["task"] == "worker:0" and restart["host"], restart
    assert restart["message"] == f"worker:0 failed (exit code 5) on {restart['host']}; restart 1 in 1 s"
    assert (end["task"], end["host"]) == ("", "")
    assert end["message"] == "job SUCCEEDED: all 1 worker task(s) succeeded (1 task restart(s))"
    assert restart["time"] <= end["time"] and doc["start_time_ms"] / 1000 - 5 < restart["time"]
    assert doc["tasks"][0]["restarts"] == 1

    # the hook ran in the AM's container for both, in order, job_end's before the AM ended
    def hook_output() -> str | None:
        out = tfyarn("logs", app)
        return out.stdout if out.returncode == 0 and len(hook_lines(out.stdout, APP)) >= 2 else None

    log = wait_for("the AM's log with the hook's lines", hook_output, timeout_s=120, every_s=3)
    from_stdin = [json.loads(line) for line in hook_lines(log, STDIN)]
    from_env = [json.loads(line) for line in hook_lines(log, ENV)]
    assert from_stdin == from_env == events
    assert hook_lines(log, APP) == [app, app]
    assert "--on-event hook" not in log  # no warning: both runs exited 0
