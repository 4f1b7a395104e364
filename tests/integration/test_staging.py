"""HDFS staging on the real cluster: inputs in, outputs published atomically, `tfyarn fetch`."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import EXAMPLES, TFYARN, app_id_from, hadoop, status_json, wait_for
from tests.integration.procs import wait_none_left

BASE = f"/user/{os.environ.get('USER', 'root')}/it-staging-{uuid.uuid4().hex[:8]}"

# Needs the cluster to itself (tests/integration/conftest.py, Makefile's two phases): counts every application on the cluster before and after.
pytestmark = pytest.mark.exclusive


def hdfs_put(cluster, local: Path, remote: str) -> None:
    hadoop(cluster, "hdfs", "dfs", "-mkdir", "-p", os.path.dirname(remote))
    res = hadoop(cluster, "hdfs", "dfs", "-put", "-f", str(local), remote)
    assert res.returncode == 0, res.stderr


def hdfs_exists(cluster, remote: str) -> bool:
    return hadoop(cluster, "hdfs", "dfs", "-test", "-e", remote).returncode == 0


@pytest.fixture(scope="module")
def datasets(cluster, tmp_path_factory) -> Iterator[dict[str, str]]:
    root = tmp_path_factory.mktemp("data")
    out = {}
    for features in (8, 16):
        local = root / f"reg{features}"
        subprocess.run([sys.executable, str(EXAMPLES / "make_data.py"), "--features", str(features),
                        "--samples", "1024", "--out", str(local)], check=True, capture_output=True)
        hdfs_put(cluster, local, f"{BASE}/reg{features}")
        out[f"reg{features}"] = f"hdfs://{BASE}/reg{features}"
    shards = root / "shards"
    shards.mkdir()
    for i in range(10):
        (shards / f"part-{i:05d}").write_text(f"shard {i}\n" * (i + 1))
    hdfs_put(cluster, shards, f"{BASE}/shards")
    out["shards"] = f"hdfs://{BASE}/shards"
    yield out
    hadoop(cluster, "hdfs", "dfs", "-rm", "-r", "-f", "-skipTrash", BASE)


def run_example(example: str, flags: str, *args: str) -> tuple[int, str, str]:
    env = {**os.environ, "TFYARN": f"{sys.executable} -m tfyarn", "TFYARN_SUBMIT_FLAGS": flags}
    proc = subprocess.run(["bash", str(EXAMPLES / example / "submit.sh"), *args], env=env,
                          capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


def fetch(app: str, dest: Path) -> subprocess.CompletedProcess[str]:
    """`tfyarn fetch`, retried while the job's outputs are not known yet (they are read from its
    aggregated AM log, seconds after the end); its first other answer."""
    def attempt() -> subprocess.CompletedProcess[str] | None:
        res = subprocess.run([*TFYARN, "fetch", app, str(dest)], capture_output=True, text=True)
        return res if res.returncode == 0 or "not known yet" not in res.stderr else None
    return wait_for("the job's outputs to be known", attempt, timeout_s=60, every_s=2)


EVAL_TF = """
import sys, numpy as np, tensorflow as tf
model = tf.saved_model.load(sys.argv[1] + "/saved_model")
x, y = np.load(sys.argv[2] + "/x.npy"), np.load(sys.argv[2] + "/y.npy")
pred = model.signatures["serving_default"](tf.constant(x))
mse = float(np.mean((list(pred.values())[0].numpy() - y) ** 2))
print(mse)
"""

EVAL_TORCH = """
import sys, numpy as np, torch
x, y = torch.from_numpy(np.load(sys.argv[2] + "/x.npy")), torch.from_numpy(np.load(sys.argv[2] + "/y.npy"))
model = torch.nn.Sequential(torch.nn.Linear(x.shape[1], 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
model.load_state_dict(torch.load(sys.argv[1] + "/model.pt"))
print(float(torch.nn.functional.mse_loss(model(x), y)))
"""


@pytest.mark.parametrize("example,data,evaluate", [
    ("tensorflow/ps_strategy", "reg8", EVAL_TF),
    ("pytorch/ddp", "reg16", EVAL_TORCH),
])
def test_example_reads_hdfs_input_publishes_output_and_fetch_brings_a_working_model(
        cluster, datasets, tmp_path, yarn_apps, example, data, evaluate):
    dest = f"{BASE}/models/{example.replace('/', '-')}"
    code, out, err = run_example(example, f"--input {datasets[data]} --output model:hdfs://{dest}",
                                 "--epochs", "4")
    app = app_id_from(out + err)
    yarn_apps.append(app)
    assert code == 0, out + err
    assert hdfs_exists(cluster, dest)
    listing = hadoop(cluster, "hdfs", "dfs", "-ls", os.path.dirname(dest)).stdout
    assert "_tfyarn_tmp_" not in listing  # the staging sibling was renamed away
    res = fetch(app, tmp_path / "fetched")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Fetched" in res.stdout
    local_data = tmp_path / "data"
    hadoop(cluster, "hdfs", "dfs", "-get", f"{BASE}/{data}", str(local_data))
    ev = subprocess.run([sys.executable, "-c", evaluate, str(tmp_path / "fetched"), str(local_data)],
                        capture_output=True, text=True, timeout=300)
    assert ev.returncode == 0, ev.stderr
    assert float(ev.stdout.strip().splitlines()[-1]) < 1.0  # a trained model (untrained: ~9)
    # The task read the staged files, not generated data, and its staging time was recorded.
    logs = subprocess.run([*TFYARN, "logs", app], capture_output=True, text=True).stdout
    result = json.loads(next(l.split(" ", 1)[1] for l in logs.splitlines() if l.startswith("TFYARN_RESULT ")))
    assert result["data"].endswith(f"inputs/{data}") and result["samples"] == 1024
    st = json.loads(subprocess.run([*TFYARN, "status", "--json", app], capture_output=True, text=True).stdout)
    assert all(t["staging_s"] is not None for t in st["tasks"])
    # A second fetch resumes: everything is already there.
    again = subprocess.run([*TFYARN, "fetch", app, str(tmp_path / "fetched")], capture_output=True, text=True)
    assert "already there" in again.stdout


def test_sharded_input_gives_workers_disjoint_files_covering_the_set(cluster, datasets, yarn_apps):
    show = "import os, json; print('FILES ' + json.dumps(sorted(os.listdir(os.environ['TFYARN_INPUT']))))"
    res = subprocess.run([*TFYARN, "submit", "--num-workers", "3", "--worker-memory", "512m", "--input",
                          datasets["shards"], "--input-mode", "shard", "--wait", "--", "python", "-c", show],
                         capture_output=True, text=True, timeout=300)
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 0, res.stdout + res.stderr
    logs = subprocess.run([*TFYARN, "logs", app], capture_output=True, text=True).stdout
    sets = [set(json.loads(l.split(" ", 1)[1])) for l in logs.splitlines() if l.startswith("FILES ")]
    assert len(sets) == 3 and all(sets)
    assert sum(len(s) for s in sets) == len(set.union(*sets)) == 10
    assert set.union(*sets) == {f"part-{i:05d}" for i in range(10)}


def submit_writer(yarn_apps: list[str], dest: str, script: str, *flags: str) -> str:
    """Submit (without waiting) a one-task job whose script writes ./out, published to ``dest``."""
    sub = subprocess.run([*TFYARN, "submit", "--worker-memory", "512m", "--output", f"out:hdfs://{dest}", *flags,
                          "--", "python", "-c", script], capture_output=True, text=True)
    app = app_id_from(sub.stdout)
    yarn_apps.append(app)
    return app


def test_killed_during_upload_leaves_nothing_at_the_destination(cluster, yarn_apps):
    dest = f"{BASE}/killed-{uuid.uuid4().hex[:6]}"
    write = ("import os\nos.makedirs('out')\n"
             "for i in range(400):\n    open(f'out/f{i:04d}', 'wb').write(os.urandom(1 << 20))\n")
    app = submit_writer(yarn_apps, dest, write, "--upload-threads", "1")
    parent = os.path.dirname(dest)
    wait_for("the upload to start", lambda: "_tfyarn_tmp_" in hadoop(cluster, "hdfs", "dfs", "-ls", parent).stdout,
             timeout_s=180, every_s=0.5)
    assert subprocess.run([*TFYARN, "kill", app], capture_output=True, text=True).returncode == 0
    assert wait_none_left(app) == []  # no process of the job is left that could still publish
    assert not hdfs_exists(cluster, dest)


def test_missing_input_and_existing_output_are_refused_before_submission(cluster, datasets):
    before = hadoop(cluster, "yarn", "application", "-list", "-appStates", "ALL").stdout.count("application_")
    res = subprocess.run([*TFYARN, "submit", "--input", f"hdfs://{BASE}/no-such-dir", "--", "python", "-c", "1"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert res.stderr.strip() == f"Error: --input: hdfs://{BASE}/no-such-dir does not exist"
    res = subprocess.run([*TFYARN, "submit", "--output", f"model:{datasets['reg8']}", "--", "python", "-c", "1"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert "already exists; pass --overwrite" in res.stderr
    after = hadoop(cluster, "yarn", "application", "-list", "-appStates", "ALL").stdout.count("application_")
    assert after == before


def test_unreachable_namenode_is_named(cluster, tmp_path):
    conf = tmp_path / "conf"
    shutil.copytree(cluster.layout.conf_dir, conf)
    core = (conf / "core-site.xml").read_text().replace(cluster.layout.fs_uri, "hdfs://127.0.0.1:1")
    (conf / "core-site.xml").write_text(core)
    t0 = time.monotonic()
    res = subprocess.run([*TFYARN, "submit", "--input", "hdfs:///data", "--", "python", "-c", "1"],
                         env={**os.environ, "HADOOP_CONF_DIR": str(conf)}, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 3, res.stderr
    assert res.stderr.strip().startswith("Error: the NameNode of hdfs:///data at 127.0.0.1:1 is unreachable")
    assert time.monotonic() - t0 < 30


def test_snapshots_while_running_by_timer_and_by_tfyarn_save(cluster, yarn_apps):
    """By the timer, by the owner's `tfyarn save` (the job's store), and by another user's, which YARN
    passes as a signal to the AM's container (this cluster has no ACLs: YARN lets anyone)."""
    dest = f"{BASE}/snap-{uuid.uuid4().hex[:6]}"
    write = ("import os, time\nos.makedirs('out', exist_ok=True)\n"
             "for i in range(40):\n    open(f'out/step-{i:03d}', 'w').write(str(i))\n    time.sleep(1)\n")
    app = submit_writer(yarn_apps, dest, write, "--save-every", "5")
    # Mid-run for sure once the timer's first snapshot (5 s into the 25 s command) is there.
    wait_for("the timer's first snapshot", lambda: f"{dest}.snapshots/" in hadoop(
        cluster, "hdfs", "dfs", "-ls", f"{dest}.snapshots").stdout, timeout_s=180, every_s=1)
    save = subprocess.run([*TFYARN, "save", app], capture_output=True, text=True, timeout=120)
    assert save.returncode == 0, save.stdout + save.stderr
    uri = save.stdout.strip().splitlines()[-1].removeprefix("Snapshot: ")
    assert uri.startswith(f"hdfs://{dest}.snapshots/")
    listing = hadoop(cluster, "hdfs", "dfs", "-ls", uri.removeprefix("hdfs://")).stdout
    assert "step-000" in listing and "step-039" not in listing  # taken mid-run
    other = subprocess.run([*TFYARN, "save", app], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "HADOOP_USER_NAME": "mallory"})
    assert other.returncode == 0, other.stdout + other.stderr
    assert "through YARN" in other.stderr
    theirs = other.stdout.strip().splitlines()[-1].removeprefix("Snapshot: ")
    assert theirs.startswith(f"hdfs://{dest}.snapshots/") and theirs != uri
    assert "step-039" not in hadoop(cluster, "hdfs", "dfs", "-ls", theirs.removeprefix("hdfs://")).stdout
    saves = [e for e in status_json(app)["events"] if e["kind"] == "save"]
    assert [e["message"].split(": ", 1)[1] for e in saves if e["task"]] == [uri, theirs], saves
    assert [e["task"] for e in saves].count("") == 2  # the two requests
    done = wait_for("the job to end", lambda: (d := status_json(app))["state"] in ("SUCCEEDED", "FAILED", "KILLED")
                    and d, timeout_s=120, every_s=2)
    assert done["state"] == "SUCCEEDED"
    snaps = hadoop(cluster, "hdfs", "dfs", "-ls", f"{dest}.snapshots").stdout
    assert snaps.count(f"{dest}.snapshots/") >= 3  # the timer's and ours
    assert "step-039" in hadoop(cluster, "hdfs", "dfs", "-ls", dest).stdout  # the final publish is complete
