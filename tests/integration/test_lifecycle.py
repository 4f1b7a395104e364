"""`cluster down` leaves nothing behind; a stopped cluster is reported, not waited on.

Marked `lifecycle`: conftest orders these tests last, since they stop the
cluster that the other tests use (and start it again at the end).
"""
import subprocess
import time
import uuid

import pytest

from tests.integration.conftest import TFYARN, hadoop, tfyarn

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

    down = tfyarn("cluster", "down")
    assert down.returncode == 0, down.stderr
    assert hadoop_jvms() == []
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
