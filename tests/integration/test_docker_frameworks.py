"""The examples in the framework images, on both nodes and a real Docker engine.

The images come from docker/build-image.sh (built once per machine, tagged by
the script's content): `tfyarn-tf` (tensorflow-cpu from PyPI) and
`tfyarn-torch` (Debian's CPU torch 1.13, not the venv's). The PS example
runs its workers and ps in `tfyarn-tf` and its chief in an image of its own;
the DDP example runs in `tfyarn-torch`. Both publish their model from the
task's working dir with --output. A watcher records which image each YARN
container's Docker container ran, as the engine reports it.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import EXAMPLES, app_id_from, results, status_json, tfyarn, wait_for
from tests.integration.procs import job_processes, wait_none_left
from tests.integration.nodes import NODE2, ip, two_nodes  # noqa: F401
from tests.integration.test_docker import ROOT, boxes, docker


def build(kind: str) -> str:
    res = subprocess.run(["bash", str(ROOT / "docker" / "build-image.sh"), kind], capture_output=True, text=True,
                         timeout=1200, env={**os.environ, "PYTHON": sys.executable})
    assert res.returncode == 0, res.stderr
    return res.stdout.split()[-1]


@pytest.fixture(scope="module")
def images() -> dict[str, str]:
    assert docker("info").returncode == 0, "no Docker engine answers (`make docker` starts one)"
    tf, torch = build("tf"), build("torch")
    # The chief's own image: tfyarn-tf with a label, so the engine tells it apart (no new layer to copy).
    chief = f"tfyarn-tf-chief:{hashlib.sha256(tf.encode()).hexdigest()[:12]}"
    if docker("image", "inspect", chief).returncode != 0:
        made = subprocess.run(["docker", "build", "-q", "-t", chief, "-"], input=f"FROM {tf}\nLABEL tfyarn.role=chief\n",
                              capture_output=True, text=True, timeout=300)
        assert made.returncode == 0, made.stderr
    for old in docker("images", "tfyarn-tf-chief", "--format", "{{.Repository}}:{{.Tag}}").stdout.split():
        if old != chief:  # made for an earlier tfyarn-tf: it would keep that image's layers
            docker("rmi", old)
    return {"tf": tf, "torch": torch, "chief": chief}


class Watcher:
    """Which image each tfyarn Docker container runs, polled from the engine while the jobs run."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(0.5):
            out = docker("ps", "-a", "--filter", "name=tfyarn-", "--format", "{{.Names}} {{.Image}}").stdout
            for line in out.splitlines():
                name, image = line.split()
                self.seen[name] = image

    def stop(self) -> dict[str, str]:
        self._stop.set()
        self._thread.join()
        return self.seen


@pytest.fixture(scope="module")
def runs(two_nodes, images) -> Iterator[dict[str, dict]]:
    """Both examples, submitted side by side by their own submit.sh, each followed to its end."""
    run = uuid.uuid4().hex[:8]
    jobs = {
        "ps": ("tensorflow/ps_strategy", f"--docker-image {images['tf']} --chief-docker-image {images['chief']}",
               ["--epochs", "3", "--steps-per-epoch", "20"]),
        "ddp": ("pytorch/ddp", f"--docker-image {images['torch']}", ["--epochs", "4"]),
    }
    watcher = Watcher()
    procs = {}
    # A chief that fails while the ps and worker serve in tfyarn-tf: the AM stops them mid-run.
    fails = ["--framework", "tensorflow", "--chief", "--num-workers", "1", "--num-ps", "1", "--chief-memory", "512m",
             "--worker-memory", "1g", "--ps-memory", "1g", "--docker-image", images["tf"], "--wait", "--",
             "python", "-c", "import time; time.sleep(30); raise SystemExit(3)"]
    procs["fails"] = ("", subprocess.Popen([sys.executable, "-m", "tfyarn", "submit", *fails], stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True))
    for key, (example, flags, args) in jobs.items():
        dest = f"hdfs:///tmp/docker-{key}-{run}"
        env = {**os.environ, "TFYARN": f"{sys.executable} -m tfyarn",
               "TFYARN_SUBMIT_FLAGS": f"--placement spread {flags} --output ./model:{dest}"}
        procs[key] = (dest, subprocess.Popen(["bash", str(EXAMPLES / example / "submit.sh"), "--model-dir", "model",
                                              *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                             text=True))
    out = {}
    for key, (dest, proc) in procs.items():
        stdout, stderr = proc.communicate(timeout=900)
        out[key] = {"rc": proc.returncode, "stdout": stdout, "stderr": stderr, "dest": dest,
                    "app": app_id_from(stdout + stderr)}
    seen = watcher.stop()
    for r in out.values():
        r["left"] = wait_for("no Docker container of the job", lambda: not boxes(r["app"]), timeout_s=120)
        r["images"] = {t["name"]: seen.get(f"tfyarn-{t['yarn_container_id']}")
                       for t in status_json(r["app"])["tasks"]}
        r["hosts"] = {ip(t["host"]) for t in status_json(r["app"])["tasks"]}
    yield out


def fetched(dest: str, tmp_path: Path) -> Path:
    got = tfyarn("fetch", dest, str(tmp_path / "model"))
    assert got.returncode == 0, got.stderr
    return tmp_path / "model"


def test_ps_example_runs_workers_and_ps_in_tfyarn_tf_and_the_chief_in_its_own_image(runs, images, yarn_apps,
                                                                                   tmp_path):
    run = runs["ps"]
    yarn_apps.append(run["app"])
    assert run["rc"] == 0 and "SUCCEEDED: all 1 chief task(s) succeeded" in run["stdout"], run["stdout"] + run["stderr"]
    assert run["images"] == {"chief:0": images["chief"], "worker:0": images["tf"], "worker:1": images["tf"],
                             "ps:0": images["tf"]}, run["images"]
    assert run["hosts"] == {"127.0.0.1", NODE2}
    [res] = results(run["app"], 1)
    assert res["variable_devices"] and all(d.startswith("/job:ps/") for d in res["variable_devices"])
    assert res["num_workers"] == 2 and res["num_ps"] == 1
    assert res["losses"][-1] < 0.5 * res["losses"][0], res["losses"]
    model = fetched(run["dest"], tmp_path)  # written in the chief's image, published by its executor
    assert (model / "saved_model" / "saved_model.pb").exists()
    assert list((model / "ckpt").glob("ckpt-1.index"))
    assert boxes(run["app"]) == []


def test_ddp_example_trains_in_tfyarn_torch_with_the_images_own_torch(runs, images, yarn_apps, tmp_path):
    run = runs["ddp"]
    yarn_apps.append(run["app"])
    assert run["rc"] == 0, run["stdout"] + run["stderr"]
    assert run["images"] == {"worker:0": images["torch"], "worker:1": images["torch"]}, run["images"]
    assert run["hosts"] == {"127.0.0.1", NODE2}
    found = sorted(results(run["app"], 2), key=lambda r: r["rank"])
    assert [r["rank"] for r in found] == [0, 1] and all(r["world_size"] == 2 for r in found)
    assert all(r["backend"] == "gloo" and r["device"] == "cpu" for r in found)
    assert all(r["torch"].startswith("1.13.") for r in found), found  # Debian's, not the node's 2.x
    shard0, shard1 = (set(r["shard_epoch0"]) for r in found)
    assert shard0 and shard1 and not shard0 & shard1 and shard0 | shard1 == set(range(1024))
    assert found[0]["params_head"] == found[1]["params_head"]  # DDP synchronised different starting weights
    assert found[0]["losses"][-1] < found[0]["losses"][0]
    assert (fetched(run["dest"], tmp_path) / "model.pt").exists()
    assert boxes(run["app"]) == []


def test_a_failing_chief_stops_the_tasks_in_their_images_and_leaves_no_container(runs, images, yarn_apps):
    """The ps and worker serve in tfyarn-tf until the AM stops them: with --init they get the SIGTERM, and
    the guard removes what is left even when Docker is still removing a large vfs container."""
    run = runs["fails"]
    yarn_apps.append(run["app"])
    assert run["rc"] == 4 and "task chief:0 failed (exit code 3)" in run["stdout"], run["stdout"] + run["stderr"]
    assert set(run["images"].values()) == {images["tf"]}, run["images"]
    assert boxes(run["app"]) == []
    assert wait_none_left(run["app"]) == [], job_processes(run["app"])
