"""The public Python API and the scriptable CLI on the real cluster.

examples/python_api.py runs a 2-worker job to SUCCEEDED; `submit --json` and
`wait --json` print one JSON object each; Ctrl-C in `tfyarn wait` leaves the
job running and says how to re-attach.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

import pytest

from tests.integration.conftest import EXAMPLES, TFYARN, app_id_from, status_json, tfyarn, wait_for

QUICK = ["--worker-memory", "512m", "--", "python", "-c", "print('hello from the json test')"]


def test_the_python_api_example_runs_a_job_to_success(cluster, yarn_apps):
    res = subprocess.run([sys.executable, str(EXAMPLES / "python_api.py")], capture_output=True, text=True,
                         timeout=300)
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"{app} SUCCEEDED: all 2 worker task(s) succeeded" in res.stdout
    assert "] SUCCEEDED" in res.stderr  # the progress callback saw the end
    assert "worker:0 on " in res.stdout and "worker:1 on " in res.stdout  # the status document's tasks


def test_submit_json_then_wait_json(cluster, yarn_apps):
    res = tfyarn("submit", "--json", "--num-workers", "2", "--name", "it-json", *QUICK)
    assert res.returncode == 0, res.stdout + res.stderr
    sub = json.loads(res.stdout)
    yarn_apps.append(sub["app_id"])
    assert set(sub) == {"app_id", "tracking_url", "state"}, sub
    assert sub["app_id"].startswith("application_") and sub["state"] in ("SUBMITTED", "ACCEPTED", "RUNNING")
    assert f"Submitted {sub['app_id']}" in res.stderr  # the human lines moved off stdout

    done = tfyarn("wait", "--json", sub["app_id"])
    assert done.returncode == 0, done.stdout + done.stderr
    end = json.loads(done.stdout)
    assert list(end) == ["app_id", "tracking_url", "state", "diagnostics", "status"]
    assert end["app_id"] == sub["app_id"] and end["state"] == "SUCCEEDED"
    assert end["tracking_url"].startswith("http")
    assert end["status"]["state"] == "SUCCEEDED" and len(end["status"]["tasks"]) == 2
    assert "] SUCCEEDED" in done.stderr


def test_submit_json_wait_of_a_failing_job_exits_4_with_its_final_state(cluster, yarn_apps):
    res = tfyarn("submit", "--json", "--wait", "--worker-memory", "512m", "--name", "it-json-exit3",
                 "--", "python", "-c", "import sys; sys.exit(3)")
    out = json.loads(res.stdout)
    yarn_apps.append(out["app_id"])
    assert res.returncode == 4, res.stdout + res.stderr
    assert out["state"] == "FAILED" and "exit code 3" in out["diagnostics"]
    assert "ended FAILED" in res.stderr


def test_ctrl_c_in_wait_leaves_the_job_running(cluster, yarn_apps):
    res = tfyarn("submit", "--json", "--name", "it-detach", "--worker-memory", "512m",
                 "--", "python", "-c", "import time; time.sleep(600)")
    assert res.returncode == 0, res.stdout + res.stderr
    app = json.loads(res.stdout)["app_id"]
    yarn_apps.append(app)
    try:
        # SIGINT at its default, as in a terminal: a suite started in the background (`... &` in a
        # non-interactive shell) inherits it ignored, and Python then never raises KeyboardInterrupt.
        waiter = subprocess.Popen([*TFYARN, "wait", app], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, "PYTHONFAULTHANDLER": "1"},
                                  preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        said: list[str] = []  # its stderr, line by line, as it comes
        reader = threading.Thread(target=lambda: said.extend(waiter.stderr or ()), daemon=True)
        reader.start()
        # Ctrl-C once it follows (its first progress line), not while it still starts skein's driver
        wait_for("`tfyarn wait` printing progress", lambda: any(ln.startswith("[") for ln in said), timeout_s=120)
        waiter.send_signal(signal.SIGINT)
        try:
            rc = waiter.wait(timeout=30)
        except subprocess.TimeoutExpired:  # where it hangs: faulthandler prints every thread's stack on SIGABRT
            waiter.send_signal(signal.SIGABRT)
            waiter.wait(timeout=30)
            reader.join(timeout=10)
            pytest.fail("`tfyarn wait` still ran 30 s after SIGINT; its stderr:\n" + "".join(said))
        assert rc == 130, said
        reader.join(timeout=10)
        assert any(ln.startswith(f"Interrupted: {app} keeps running; re-attach with `tfyarn wait {app}`, "
                                 f"stop it with `tfyarn kill {app}`") for ln in said), said
        assert status_json(app)["state"] in ("ACCEPTED", "RUNNING")  # following stopped, the job did not
    finally:
        assert tfyarn("kill", app).returncode == 0


def test_wait_takes_the_ams_documents_pushed_while_the_job_trains(cluster, yarn_apps, monkeypatch):
    """Once the job trains, Client.wait stops polling: the AM's status documents come through a watch
    on its key-value store, the last one (the AM's decided state) the moment the AM writes it."""
    import tfyarn.client as client_mod
    from tfyarn.client import Client
    from tfyarn.spec import JobSpec, RoleSpec

    watches, docs = [], []

    def spy(sk, app_id):
        w = client_mod.docwatch_open(sk, app_id)
        if w is not None:
            real_next = w.next
            w.next = lambda timeout: docs.append(real_next(timeout)) or docs[-1]
        watches.append(w)
        return w

    monkeypatch.setattr(client_mod, "docwatch_open", client_mod.open_watch, raising=False)
    monkeypatch.setattr(client_mod, "open_watch", spy)
    cmd = ("python", "-c", "import time; time.sleep(12)")
    spec = JobSpec(name="it-pushed-docs", command=cmd, framework="none",
                   roles={"worker": RoleSpec("worker", 2, memory_mb=512, command=cmd)}).validate()
    with Client() as client:
        app = client.submit(spec)
        yarn_apps.append(app)
        reports = []
        real_report = client.report
        monkeypatch.setattr(client, "report", lambda a: reports.append(a) or real_report(a))
        final = client.wait(app, poll_s=1.0)
    assert final.state.value == "SUCCEEDED", final.diagnostics
    assert len(watches) == 1 and watches[0] is not None, "the owner's watch did not open"
    pushed = [d for d in docs if d is not None]
    assert pushed and pushed[-1].state == "SUCCEEDED", [d.state for d in pushed]  # the AM's decided document
    # 12 s of training read from the push stream, not polled every 2 s: YARN is asked when the
    # watch opens, then until the AM's container has ended (about a second after its last document)
    assert len(reports) <= 12, f"{len(reports)} RM reads; the pushed documents: {[d.state for d in pushed]}"
