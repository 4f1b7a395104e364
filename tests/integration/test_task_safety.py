"""A task told to stop never counts as succeeded and never publishes; user env never reaches a shell.

Real cluster: the task's executor gets SIGTERM, as YARN sends it when a
container is killed, once while the command trains (a command that even
exits 0 on SIGTERM) and once while its outputs upload to HDFS.
"""
from __future__ import annotations

import os
import signal
import subprocess
import uuid

import pytest

from tests.integration.conftest import TFYARN, app_id_from, hadoop, status_json, tfyarn, wait_for
from tests.integration.procs import container_pids

BASE = f"/user/{os.environ.get('USER', 'root')}/it-safety-{uuid.uuid4().hex[:8]}"
EXECUTOR = "-m appmaster.executor"


@pytest.fixture(scope="module")
def hdfs_base(cluster):  # type: ignore[no-untyped-def]
    hadoop(cluster, "hdfs", "dfs", "-mkdir", "-p", BASE)
    yield BASE
    hadoop(cluster, "hdfs", "dfs", "-rm", "-r", "-f", "-skipTrash", BASE)


def hdfs_names(path: str) -> list[str]:
    """Entries of an HDFS dir, read in-process (fast enough to catch an upload in flight)."""
    from tfyarn.storage import locate, parse_uri

    loc = locate(parse_uri(f"hdfs://{path}"))
    import pyarrow.fs as pafs

    return [os.path.basename(i.path) for i in loc.fs.get_file_info(pafs.FileSelector(loc.path))]


def submit_waiting(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([*TFYARN, "submit", "--worker-memory", "512m", "--wait", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, app_id_from(proc.stdout.readline())


def sigterm_executor(app: str) -> None:
    """SIGTERM worker:0's executor (only it: not the container's process group)."""
    def one() -> int | None:
        cid = status_json(app)["tasks"][0]["yarn_container_id"]
        pids = container_pids(cid, EXECUTOR) if cid else []
        return pids[0] if len(pids) == 1 else None
    os.kill(wait_for("worker:0's executor", one, timeout_s=60), signal.SIGTERM)


def assert_failed_and_unpublished(proc: subprocess.Popen[str], app: str, dest: str) -> None:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 4, out + err  # --wait: the job did not succeed
    doc = status_json(app)
    assert doc["state"] in ("FAILED", "KILLED"), doc["state"]
    task = doc["tasks"][0]
    assert task["state"] == "FAILED" and task["exit_code"] == 128 + signal.SIGTERM, task
    parent, name = os.path.split(dest)
    assert name not in hdfs_names(parent)
    wait_for("no hidden upload dir left", lambda: not [n for n in hdfs_names(parent) if name in n],
             timeout_s=120)


def test_a_task_stopped_while_training_fails_and_publishes_nothing(hdfs_base, yarn_apps):
    dest = f"{hdfs_base}/trained"
    train = ("trap 'exit 0' TERM; mkdir -p model; echo partial > model/weights; echo TRAINING-STARTED; "
             "while true; do sleep 0.2; done")
    proc, app = submit_waiting("--output", f"model:hdfs://{dest}", "--", "bash", "-c", train)
    yarn_apps.append(app)
    wait_for("training to start", lambda: "TRAINING-STARTED" in tfyarn("logs", app, "--task", "worker:0").stdout,
             timeout_s=180, every_s=2)
    sigterm_executor(app)
    assert_failed_and_unpublished(proc, app, dest)


def test_a_task_stopped_during_its_output_upload_fails_and_publishes_nothing(hdfs_base, yarn_apps):
    dest = f"{hdfs_base}/uploaded"
    write = ("import os\nos.makedirs('model')\n"
             "for i in range(800):\n    open(f'model/part-{i:04d}', 'wb').write(os.urandom(32768))\n")
    proc, app = submit_waiting("--upload-threads", "1", "--output", f"model:hdfs://{dest}",
                               "--", "python", "-c", write)
    yarn_apps.append(app)
    wait_for("the upload to be under way", lambda: any("._tfyarn_tmp_" in n for n in hdfs_names(hdfs_base)),
             timeout_s=180, every_s=0.2)
    sigterm_executor(app)
    assert_failed_and_unpublished(proc, app, dest)


def test_env_values_reach_the_task_literally_and_never_run_in_a_shell(cluster, yarn_apps, tmp_path):
    marker = tmp_path / "pwned"
    value = f'$(touch {marker}) "quoted" `id` \\back'
    res = tfyarn("submit", "--worker-memory", "512m", "--wait", "--env", f"FOO={value}",
                 "--", "python", "-c", "import os; print('FOO=<' + os.environ['FOO'] + '>')")
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 0, res.stdout + res.stderr
    log = tfyarn("logs", app, "--task", "worker:0").stdout
    assert f"FOO=<{value}>" in log, log
    assert not marker.exists()
