"""The four examples, run by their own submit.sh on the real cluster, checked for real distributed training.

They run on two nodes with `--placement spread`, so each job has tasks on
both: every check below holds across nodes. Their model dirs are in $HOME,
a path every node sees (like a shared home dir); node 2's /tmp is its own.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tfyarn.storage import filesystem

from tests.integration.conftest import EXAMPLES, TFYARN, app_id_from, results, status_json
from tests.integration.nodes import NODE2, ip, two_nodes  # noqa: F401

RUNS = {"ps": "tensorflow/ps_strategy", "mwms": "tensorflow/multi_worker_mirrored", "ddp": "pytorch/ddp",
        "streaming": "pytorch/streaming"}
SMALL = {"ps": ["--epochs", "3", "--steps-per-epoch", "20"], "mwms": ["--epochs", "3"], "ddp": ["--epochs", "4"],
         "streaming": ["--epochs", "2"]}
SHARDS, ROWS = 5, 4000  # the streaming example's data: 5 shards for 2 ranks, so one rank reads a shard more


@pytest.fixture(scope="module")
def runs(two_nodes) -> Iterator[dict[str, dict]]:
    """All four examples submitted side by side, each followed to its end (the streaming one's shards
    written to HDFS first, by its make_shards.py)."""
    run_id = uuid.uuid4().hex
    shards = f"hdfs:///tmp/test-shards-{run_id}"
    made = subprocess.run([sys.executable, str(EXAMPLES / "pytorch/streaming/make_shards.py"), "--out", shards,
                           "--shards", str(SHARDS), "--samples", str(ROWS)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    env = {**os.environ, "TFYARN": f"{sys.executable} -m tfyarn", "TFYARN_SUBMIT_FLAGS": "--placement spread",
           "DATA": shards}
    base = Path.home() / ".tfyarn" / "test-models" / run_id
    procs = {}
    for key, example in RUNS.items():
        model_dir = base / key / "model"
        procs[key] = (model_dir, subprocess.Popen(
            ["bash", str(EXAMPLES / example / "submit.sh"), "--model-dir", str(model_dir), *SMALL[key]],
            env={**env, "WORKER_MEMORY": "1g"} if key == "streaming" else env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    out = {}
    for key, (model_dir, proc) in procs.items():
        stdout, stderr = proc.communicate(timeout=900)
        out[key] = {"rc": proc.returncode, "stdout": stdout, "stderr": stderr, "model_dir": model_dir,
                    "app": app_id_from(stdout + stderr)}
    yield out
    shutil.rmtree(base, ignore_errors=True)
    fs, path = filesystem(shards)
    fs.delete_dir(path)


@pytest.mark.parametrize("key", list(RUNS))
def test_each_example_ran_on_both_nodes(runs, key):
    """`--placement spread`: every job has tasks on node 1 and node 2, as its status shows."""
    tasks = status_json(runs[key]["app"])["tasks"]
    hosts = sorted({t["host"] for t in tasks})
    print(f"{RUNS[key]}: " + ", ".join(f"{t['name']} on {t['host']}" for t in tasks))
    assert {ip(h) for h in hosts} == {"127.0.0.1", NODE2}, hosts


def test_ps_strategy_trains_with_variables_on_the_ps(runs, yarn_apps):
    run = runs["ps"]
    yarn_apps.append(run["app"])
    assert run["rc"] == 0, run["stdout"] + run["stderr"]
    assert "SUCCEEDED: all 1 chief task(s) succeeded" in run["stdout"]
    [res] = results(run["app"], 1)
    assert res["variable_devices"] and all(d.startswith("/job:ps/") for d in res["variable_devices"])
    assert res["num_workers"] == 2 and res["num_ps"] == 1
    assert res["losses"][-1] < 0.5 * res["losses"][0], res["losses"]
    model = Path(run["model_dir"])
    assert (model / "saved_model" / "saved_model.pb").exists()
    assert list((model / "ckpt").glob("ckpt-1.index"))


def test_multi_worker_mirrored_trains_on_both_workers(runs, yarn_apps):
    run = runs["mwms"]
    yarn_apps.append(run["app"])
    assert run["rc"] == 0, run["stdout"] + run["stderr"]
    found = results(run["app"], 2)
    assert sorted(r["task"]["index"] for r in found) == [0, 1]
    assert all(r["num_replicas_in_sync"] == 2 for r in found)
    # Mirrored training: both workers end with the same weights and the same loss history.
    assert found[0]["weights_sum"] == pytest.approx(found[1]["weights_sum"], rel=1e-6)
    assert found[0]["losses"] == pytest.approx(found[1]["losses"], rel=1e-6)
    assert found[0]["losses"][-1] < found[0]["losses"][0]
    assert (Path(run["model_dir"]) / "saved_model" / "saved_model.pb").exists()


def test_ddp_all_reduces_over_disjoint_shards(runs, yarn_apps):
    run = runs["ddp"]
    yarn_apps.append(run["app"])
    assert run["rc"] == 0, run["stdout"] + run["stderr"]
    found = sorted(results(run["app"], 2), key=lambda r: r["rank"])
    assert [r["rank"] for r in found] == [0, 1]
    assert all(r["world_size"] == 2 and r["env_world_size"] == "2" for r in found)
    assert len({r["master"] for r in found}) == 1
    shard0, shard1 = (set(r["shard_epoch0"]) for r in found)
    assert shard0 and shard1 and not shard0 & shard1
    assert shard0 | shard1 == set(range(1024))
    # Ranks started from different random weights; identical parameters now mean DDP synchronised them.
    assert found[0]["params_head"] == found[1]["params_head"]
    assert found[0]["losses"][-1] < found[0]["losses"][0]
    assert (Path(run["model_dir"]) / "model.pt").exists()


def test_streaming_reads_each_shard_once_from_hdfs(runs, yarn_apps):
    """The ranks stream disjoint shards straight from HDFS (nothing staged) and together read every
    row once; with 5 shards for 2 ranks their row counts differ, and DDP's join() still ends both."""
    run = runs["streaming"]
    yarn_apps.append(run["app"])
    assert run["rc"] == 0, run["stdout"] + run["stderr"]
    found = sorted(results(run["app"], 2), key=lambda r: r["rank"])
    assert [r["rank"] for r in found] == [0, 1]
    assert found[0]["files"] == ["part-00000.parquet", "part-00002.parquet", "part-00004.parquet"]
    assert found[1]["files"] == ["part-00001.parquet", "part-00003.parquet"]
    assert found[0]["rows_epoch0"] + found[1]["rows_epoch0"] == ROWS
    assert found[0]["rows_epoch0"] != found[1]["rows_epoch0"]
    assert found[0]["id_sum_epoch0"] + found[1]["id_sum_epoch0"] == ROWS * (ROWS - 1) // 2
    assert all(r["data"].startswith("hdfs:///tmp/test-shards-") for r in found)
    assert all(r["losses"][-1] < r["losses"][0] for r in found), [r["losses"] for r in found]
    assert (Path(run["model_dir"]) / "model.pt").exists()
    assert not any(t.get("staging_bytes") for t in status_json(run["app"])["tasks"])  # streamed, not staged
