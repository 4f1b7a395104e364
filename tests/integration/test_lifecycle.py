"""`cluster down` leaves nothing behind; a stopped cluster is reported, not waited on.

Marked `lifecycle`: conftest orders these tests last, since they stop the
cluster that the other tests use (and start it again at the end).
"""
import json
import subprocess
import time
import urllib.request
import uuid

import pytest

from tests.integration.conftest import TFYARN, hadoop, tfyarn
from tfyarn import protocol
from tfyarn.cluster import driver
from tfyarn.cluster.daemons import port_open

pytestmark = pytest.mark.lifecycle


def hadoop_jvms() -> list[str]:
    out = subprocess.run(["pgrep", "-af", "org.apache.hadoop"], capture_output=True, text=True).stdout
    return [l for l in out.splitlines() if "pgrep" not in l]


def test_down_leaves_no_jvm_then_up_keeps_hdfs_data(cluster, tmp_path):
    marker = f"/tmp/lifecycle-{uuid.uuid4().hex}"
    src = tmp_path / "keep.txt"
    src.write_text("still here\n")
    assert hadoop(cluster, "hdfs", "dfs", "-put", str(src), marker).returncode == 0
    # A running job must not survive `down` either.
    sleeper = subprocess.run([*TFYARN, "submit", "--worker-memory", "512m", "--", "python", "-c",
                              "import time; time.sleep(600)"], capture_output=True, text=True)
    assert sleeper.returncode == 0, sleeper.stderr

    assert tfyarn("cluster", "status").stdout.count("history page") == 1  # `up` started it
    down = tfyarn("cluster", "down")
    assert down.returncode == 0, down.stderr
    assert "history page, skein driver, " in down.stdout + down.stderr
    assert hadoop_jvms() == []
    assert not port_open(protocol.HISTORY_PORT) and driver.running_pid(cluster.layout) is None
    leftovers = subprocess.run(["pgrep", "-f", "time.sleep\\(600\\)"], capture_output=True, text=True).stdout
    assert leftovers == ""
    assert tfyarn("cluster", "status").returncode == 1

    t0 = time.monotonic()
    sub = tfyarn("submit", "--", "python", "-c", "pass", timeout=60)
    assert time.monotonic() - t0 < 30
    assert sub.returncode == 3
    assert "Error: the ResourceManager at 127.0.0.1:8032 is unreachable" in sub.stderr
    assert "tfyarn cluster up" in sub.stderr and "Exception" not in sub.stderr

    up = tfyarn("cluster", "up")
    assert up.returncode == 0, up.stderr
    cat = hadoop(cluster, "hdfs", "dfs", "-cat", marker)
    assert cat.stdout == "still here\n"
    hadoop(cluster, "hdfs", "dfs", "-rm", "-skipTrash", marker)


def test_history_status_logs_and_fetch_outlive_a_cluster_restart(cluster, tmp_path):
    """The RM forgets every job when it restarts (no state store here, as on many clusters); the jobs'
    saved status documents on HDFS keep them listed, and status, logs and fetch keep working."""
    marker = f"history-{uuid.uuid4().hex[:8]}"
    out_uri = f"hdfs:///tmp/{marker}-model"
    jobs = [
        subprocess.Popen([*TFYARN, "submit", "--name", f"{marker}-ok", "--num-workers", "2", "--worker-memory", "256m",
                          "--output", f"./model:{out_uri}", "--wait", "--json", "--", "python", "-c",
                          f"import os; os.makedirs('model'); open('model/w.txt', 'w').write('{marker}'); "
                          f"print('{marker} trained', flush=True)"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        subprocess.Popen([*TFYARN, "submit", "--name", f"{marker}-bad", "--worker-memory", "256m", "--wait",
                          "--json", "--", "python", "-c", "raise SystemExit(3)"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
    ]
    ids = []
    for job, want in zip(jobs, ("SUCCEEDED", "FAILED"), strict=True):
        out, err = job.communicate(timeout=300)
        assert json.loads(out)["state"] == want, err
        ids.append(json.loads(out)["app_id"])
    before = {e["app_id"]: e for e in json.loads(tfyarn("history", "--json").stdout)}
    assert {before[i]["source"] for i in ids} == {"both"}, before

    assert tfyarn("cluster", "down").returncode == 0
    up = tfyarn("cluster", "up")
    assert up.returncode == 0, up.stderr
    assert tfyarn("list", "--json").stdout.count(marker) == 0  # the new RM knows neither

    listed = tfyarn("history", "--json")
    assert listed.returncode == 0, listed.stderr
    after = {e["app_id"]: e for e in json.loads(listed.stdout)}
    assert [(after[i]["name"], after[i]["state"], after[i]["tasks"], after[i]["source"]) for i in ids] == [
        (f"{marker}-ok", "SUCCEEDED", 2, "hdfs"), (f"{marker}-bad", "FAILED", 1, "hdfs")], after
    failed = tfyarn("history", "--state", "failed", "--since", "1h")
    assert ids[1] in failed.stdout and ids[0] not in failed.stdout, failed.stdout

    status = tfyarn("status", ids[0])
    assert status.returncode == 0, status.stderr
    assert "SUCCEEDED  (the RM has forgotten it: from HDFS)" in status.stdout and "worker:1" in status.stdout
    assert "task worker:0 failed (exit code 3)" in json.loads(tfyarn("status", "--json", ids[1]).stdout)["diagnostics"]
    logs = tfyarn("logs", ids[0])
    assert logs.returncode == 0 and f"{marker} trained" in logs.stdout, logs.stderr
    fetched = tfyarn("fetch", ids[0], str(tmp_path / "got"))
    assert fetched.returncode == 0, fetched.stderr
    assert [p.read_text() for p in (tmp_path / "got").rglob("w.txt")] == [marker]
    # `cluster up` serves the history page again (`down` stopped it): both jobs listed, each with its page.
    with urllib.request.urlopen(f"http://127.0.0.1:{protocol.HISTORY_PORT}/api/jobs", timeout=30) as r:
        served = {e["app_id"]: e for e in json.load(r)}
    assert [served[i]["state"] for i in ids] == ["SUCCEEDED", "FAILED"], served
    with urllib.request.urlopen(f"http://127.0.0.1:{protocol.HISTORY_PORT}/job/{ids[1]}/", timeout=30) as r:
        assert "task worker:0 failed (exit code 3)" in r.read().decode()
    hadoop(cluster, "hdfs", "dfs", "-rm", "-r", "-skipTrash", out_uri)
