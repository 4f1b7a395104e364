"""Jobs end to end: the real CLI submits to the real RM, the Python AM runs, tasks run the command."""
import json
import re
import subprocess
import time
import urllib.request

import pytest

from tests.integration.conftest import EXAMPLES, TFYARN, app_id_from, hadoop


@pytest.fixture(scope="module")
def finished(cluster):
    """A succeeding and a failing job, submitted side by side and followed with --wait."""
    ok = subprocess.Popen([*TFYARN, "submit", "--num-workers", "2", "--worker-memory", "512m",
                           "--queue", "research", "--name", "it-hello", "--wait",
                           "--file", str(EXAMPLES / "hello.py"), "--", "python", "hello.py"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    bad = subprocess.Popen([*TFYARN, "submit", "--worker-memory", "512m", "--worker-gpus", "1",
                            "--name", "it-exit3", "--wait", "--", "python", "-c",
                            "import sys; print('about to fail', file=sys.stderr); sys.exit(3)"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    results = {}
    for key, proc in (("ok", ok), ("bad", bad)):
        out, err = proc.communicate(timeout=300)
        results[key] = (proc.returncode, out, err, app_id_from(out + err))
    return results


def test_job_succeeds(finished, yarn_apps):
    rc, out, err, app = finished["ok"]
    yarn_apps.append(app)
    assert rc == 0, out + err
    assert f"{app} SUCCEEDED: all 2 worker task(s) succeeded" in out
    assert "Tracking URL: http://" in out


def test_failing_command_fails_the_job(finished, yarn_apps):
    rc, out, err, app = finished["bad"]
    yarn_apps.append(app)
    assert rc == 4, out + err
    assert f"{app} FAILED: task worker:0 failed (exit code 3)" in out
    assert "about to fail" in out  # the task's stderr tail is in the diagnostics
    assert "ended FAILED" in err


def test_yarn_lists_both_with_their_final_states(finished, yarn_apps, cluster):
    ok_app, bad_app = finished["ok"][3], finished["bad"][3]
    yarn_apps += [ok_app, bad_app]
    res = hadoop(cluster, "yarn", "application", "-list", "-appStates", "ALL")
    assert res.returncode == 0, res.stderr
    rows = {line.split()[0]: line.split() for line in res.stdout.splitlines() if line.startswith("application_")}
    assert rows[ok_app][1] == "it-hello" and "SUCCEEDED" in rows[ok_app]
    assert rows[bad_app][1] == "it-exit3" and "FAILED" in rows[bad_app]
    assert "research" in " ".join(rows[ok_app])
    status = hadoop(cluster, "yarn", "application", "-status", ok_app)
    assert "Final-State : SUCCEEDED" in status.stdout, status.stdout


def test_yarn_logs_return_the_commands_stdout(finished, yarn_apps, cluster):
    app = finished["ok"][3]
    yarn_apps.append(app)
    res = hadoop(cluster, "yarn", "logs", "-applicationId", app)
    assert res.returncode == 0, res.stderr
    assert "hello from worker 0 of 2" in res.stdout
    assert "hello from worker 1 of 2" in res.stdout
    assert res.stdout == subprocess.run([*TFYARN, "logs", app], capture_output=True, text=True).stdout


def test_gpu_request_is_scheduled_by_yarn(finished, yarn_apps):
    app = finished["bad"][3]
    yarn_apps.append(app)
    with urllib.request.urlopen(f"http://127.0.0.1:8088/ws/v1/cluster/apps/{app}", timeout=5) as r:
        info = json.load(r)["app"]
    seconds = {e["key"]: int(e["value"]) for e in info["resourceSecondsMap"]["entry"]}
    assert seconds["yarn.io/gpu"] > 0, seconds


def test_status_and_kill_commands(yarn_apps):
    sub = subprocess.run([*TFYARN, "submit", "--worker-memory", "512m", "--name", "it-sleeper", "--",
                          "python", "-c", "import time; time.sleep(600)"], capture_output=True, text=True)
    assert sub.returncode == 0, sub.stderr
    app = app_id_from(sub.stdout)
    yarn_apps.append(app)
    st = subprocess.run([*TFYARN, "status", "--json", app], capture_output=True, text=True)
    assert json.loads(st.stdout)["state"] in ("ACCEPTED", "RUNNING", "SUBMITTED")
    kill = subprocess.run([*TFYARN, "kill", app], capture_output=True, text=True)
    assert kill.returncode == 0, kill.stderr
    st = subprocess.run([*TFYARN, "status", "--json", app], capture_output=True, text=True)
    assert json.loads(st.stdout)["state"] == "KILLED"


SHOW_TF_CONFIG = "import os, time; print('TF_CONFIG=' + os.environ['TF_CONFIG'], flush=True); time.sleep(2)"


def test_tf_config_and_a_failing_evaluator_that_does_not_fail_the_job(cluster, yarn_apps):
    res = subprocess.run([*TFYARN, "submit", "--framework", "tensorflow", "--chief", "--num-workers", "1",
                          "--evaluator", "--chief-memory", "512m", "--worker-memory", "512m",
                          "--evaluator-memory", "512m", "--set",
                          "roles.evaluator.command=[python, -c, 'import sys; sys.exit(9)']",
                          "--wait", "--", "python", "-c", SHOW_TF_CONFIG],
                         capture_output=True, text=True, timeout=300)
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 0, res.stdout + res.stderr
    logs = subprocess.run([*TFYARN, "logs", app, "--task", "chief:0"], capture_output=True, text=True).stdout
    cfg = json.loads(next(l for l in logs.splitlines() if l.startswith("TF_CONFIG=")).split("=", 1)[1])
    assert cfg["task"] == {"type": "chief", "index": 0}
    assert set(cfg["cluster"]) == {"chief", "worker"}  # the evaluator is not part of the cluster
    assert all(":" in a for addrs in cfg["cluster"].values() for a in addrs)
    # The executor's own lines carry time, level and logger (tfyarn.logfmt), as `tfyarn logs --help` says.
    assert re.search(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO tfyarn\.executor: chief:0 registered \S+:\d+; ",
                     logs, re.M), logs


def test_failing_chief_fails_at_once_and_stops_the_parameter_server(cluster, yarn_apps):
    t0 = time.monotonic()
    res = subprocess.run([*TFYARN, "submit", "--framework", "tensorflow", "--chief", "--num-workers", "0",
                          "--num-ps", "1", "--chief-memory", "512m", "--ps-memory", "1g", "--wait", "--",
                          "python", "-c", "import sys; print('chief gives up', file=sys.stderr); sys.exit(7)"],
                         capture_output=True, text=True, timeout=300)
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 4, res.stdout + res.stderr
    assert f"{app} FAILED: task chief:0 failed (exit code 7)" in res.stdout
    assert "chief gives up" in res.stdout
    assert time.monotonic() - t0 < 120  # decided by the chief, not by the never-ending ps
