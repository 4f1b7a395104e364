"""Resume after a restart: a killed ParameterServerStrategy chief comes back with its latest snapshot and goes on.

The chief's variables live on the ps; it checkpoints them through
tfyarn.tensorflow.checkpoint_options() into ./model, which --save-every
publishes to HDFS as snapshots. The chief is killed mid-training; the
restarted one finds this job's latest snapshot in ./model (restored by its
executor before the command starts) and continues from that step.
"""

from __future__ import annotations

import re
import textwrap
import uuid
from pathlib import Path

from tests.integration.conftest import app_id_from, hadoop, status_json, tfyarn, wait_for
from tests.integration.test_reliability import kill_task, task

STEPS = 60
SCRIPT = textwrap.dedent("""
    import glob
    import os
    import time

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    from tfyarn.tensorflow import checkpoint_options

    STEPS = %(steps)d
    strategy = tf.distribute.ParameterServerStrategy(tf.distribute.cluster_resolver.TFConfigClusterResolver())
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    with strategy.scope():  # both variables live on the ps
        step = tf.Variable(0, dtype=tf.int64)
        total = tf.Variable(0.0)
    print("VARIABLES ON " + " ".join(sorted({step.device, total.device})), flush=True)
    options = checkpoint_options()  # checkpoint I/O on the chief's CPU, into its ./model
    ckpt = tf.train.Checkpoint(step=step, total=total)
    manager = tf.train.CheckpointManager(ckpt, "model", max_to_keep=None)

    def newest_first():
        # A snapshot taken while a checkpoint was written may lack that one: take the newest complete one.
        found = [(int(p[len("model/ckpt-"):-len(".index")]), p[:-len(".index")])
                 for p in glob.glob("model/ckpt-*.index")]
        return [prefix for _, prefix in sorted(found, reverse=True) if glob.glob(prefix + ".data-*")]

    resumed = False
    for prefix in newest_first():
        try:
            ckpt.restore(prefix, options=options).assert_existing_objects_matched()
        except Exception as e:
            print(f"cannot restore {prefix}: {type(e).__name__}", flush=True)
            continue
        print(f"RESUMED FROM {int(step.numpy())} total {total.numpy():.1f}", flush=True)
        resumed = True
        break

    @tf.function
    def train_step():
        total.assign_add(1.0)
        return step.assign_add(1)

    while int(step.numpy()) < STEPS:
        n = int(coordinator.schedule(train_step).fetch())
        print(f"STEP {n}", flush=True)
        manager.save(checkpoint_number=n, options=options)
        time.sleep(0.2 if resumed else 1.0)  # the first run slowly: the test kills it mid-training
    print(f"FINAL step {int(step.numpy())} total {total.numpy():.1f}", flush=True)
""") % {"steps": STEPS}


def chief_log(app: str) -> str:
    res = tfyarn("logs", app, "--task", "chief:0", timeout=180)
    return res.stdout if res.returncode == 0 else ""


def snapshot_after_training_began(app: str) -> bool:
    """A snapshot published after STEP 5: it holds checkpoints, so the restarted chief has something to resume."""
    log = chief_log(app)
    return "STEP 5\n" in log and "snapshot of ./model published" in log.split("STEP 5\n", 1)[1]


def test_a_killed_ps_chief_resumes_from_its_latest_snapshot(cluster, yarn_apps, tmp_path: Path):
    script = tmp_path / "resume_train.py"
    script.write_text(SCRIPT)
    dest = f"/tmp/tfyarn-resume-{uuid.uuid4().hex[:8]}/model"
    sub = tfyarn(
        "submit",
        "--framework",
        "tensorflow",
        "--name",
        "resume",
        "--chief",
        "--num-ps",
        "1",
        "--num-workers",
        "1",
        "--chief-memory",
        "1g",
        "--worker-memory",
        "1g",
        "--ps-memory",
        "1g",
        "--chief-restart",
        "on-failure",
        "--chief-restart-backoff",
        "1",
        "--output",
        f"./model:hdfs://{dest}",
        "--save-every",
        "2",
        "--file",
        str(script),
        "--",
        "python",
        "resume_train.py",
    )
    assert sub.returncode == 0, sub.stdout + sub.stderr
    app = app_id_from(sub.stdout)
    yarn_apps.append(app)

    wait_for("a snapshot with checkpoints in it", lambda: snapshot_after_training_began(app), timeout_s=400, every_s=1)
    first_log = chief_log(app)
    devices = re.search(r"^VARIABLES ON (.+)$", first_log, re.M)
    assert devices and all(d.startswith("/job:ps/") for d in devices.group(1).split()), first_log[-3000:]
    assert "RESUMED FROM" not in first_log  # the first chief had nothing to resume
    killed = kill_task(app, "chief:0", "resume_train.py")
    wait_for(
        "the job to end",
        lambda: status_json(app)["state"] in ("SUCCEEDED", "FAILED", "KILLED"),
        timeout_s=600,
        every_s=3,
    )

    doc = status_json(app)
    assert doc["state"] == "SUCCEEDED", doc["diagnostics"]
    chief = task(doc, "chief:0")
    assert chief["restarts"] == 1 and chief["yarn_container_id"] != killed, chief
    assert "exit code 137" in chief["history"][0], chief["history"]
    assert chief["timeline"].get("restored"), chief["timeline"]  # the executor's stage, before the command

    log = wait_for("the restarted chief's log", lambda: chief_log(app), timeout_s=120, every_s=3)
    restored = re.search(
        rf"restored ./model from (hdfs://\S+/model\.snapshots/(\d{{8}}T\d{{6}}Z)-{app}) "
        rf"\((\d+) file\(s\), [0-9.]+ MiB, [0-9.]+ s\)",
        log,
    )
    assert restored and int(restored.group(3)) > 0, log[-5000:]
    assert log.index(restored.group(0)) < log.index("RESUMED FROM")  # restored before the command ran
    k = int(re.search(r"^RESUMED FROM (\d+) total ([0-9.]+)$", log, re.M).group(1))  # type: ignore[union-attr]
    assert re.search(rf"^RESUMED FROM {k} total {k}\.0$", log, re.M), log[-5000:]  # ps variables restored too
    steps = [int(n) for n in re.findall(r"^STEP (\d+)$", log.split("RESUMED FROM", 1)[1], re.M)]
    assert 0 < k < STEPS and steps[0] == k + 1, (k, steps[:5])
    assert steps == list(range(k + 1, STEPS + 1)), steps
    assert f"FINAL step {STEPS} total {STEPS}.0" in log

    published = hadoop(cluster, "hdfs", "dfs", "-ls", f"hdfs://{dest}").stdout
    assert f"ckpt-{STEPS}.index" in published, published
    snapshots = hadoop(cluster, "hdfs", "dfs", "-ls", f"hdfs://{dest}.snapshots").stdout
    assert re.findall(rf"model\.snapshots/\d{{8}}T\d{{6}}Z-{app}$", snapshots, re.M), snapshots
    hadoop(cluster, "hdfs", "dfs", "-rm", "-r", "-f", f"hdfs://{dest.rsplit('/', 1)[0]}")
