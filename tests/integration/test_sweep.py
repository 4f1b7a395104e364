"""`tfyarn sweep` on the real cluster: trials are tfyarn jobs training a small real PyTorch model.

The example sweep (examples/sweep): 8 trials, 2 at a time, a log-uniform learning rate and a
categorical batch size; the median pruner kills at least one; the best trial's learning rate is
where the model trains well, and its model, fetched from HDFS, loads and predicts. A second sweep
on a grid: a trial that fails does not stop it, and a stop then a resume keep the finished trials.
A third keeps its study in a real PostgreSQL (Debian's, started here), and is warned, with the real
queue's numbers, that its `parallel` is more than the queue holds.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import optuna
import pytest
import torch
import yaml

from tests.integration.conftest import EXAMPLES, TFYARN, tfyarn, wait_for

SWEEP = EXAMPLES / "sweep" / "sweep.yaml"


def sweep_file(tmp_path: Path, epochs: int = 8, **changes: object) -> tuple[Path, str]:
    data = yaml.safe_load(SWEEP.read_text())
    data["job"]["command"] += ["--epochs", str(epochs)]
    name = f"it-{uuid.uuid4().hex[:8]}"
    data["name"] = name
    data["job"]["files"] = [str(EXAMPLES / "sweep" / "train.py")]
    data.update(changes)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path, name


def status(name: str) -> list[dict]:
    res = tfyarn("sweep", "status", name, "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_the_example_sweep_prunes_finds_a_good_learning_rate_and_its_best_model_loads(cluster, tmp_path):
    conf, name = sweep_file(tmp_path)
    res = tfyarn("sweep", "--conf", str(conf), timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr
    trials = status(name)
    states = [t["state"] for t in trials]
    assert len(trials) == 8 and set(states) <= {"COMPLETE", "PRUNED"}, trials
    assert "PRUNED" in states, trials  # the median pruner stopped at least one trial early
    assert len({t["app_id"] for t in trials}) == 8  # each trial its own YARN job
    best = next(t for t in trials if t["best"])
    assert 3e-3 < best["params"]["lr"] < 0.7, best  # where train.py's SGD converges in 8 epochs
    assert best["objective"] < 1.0, best
    model = tmp_path / "best"
    got = tfyarn("fetch", f"hdfs:///tmp/tfyarn-sweeps/{name}/trial-{best['trial']}", str(model))
    assert got.returncode == 0, got.stderr
    net = torch.nn.Linear(8, 1)
    net.load_state_dict(torch.load(next(model.rglob("model.pt"))))
    x = torch.randn(64, 8)
    err = torch.nn.functional.mse_loss(net(x).squeeze(1), x @ torch.arange(1.0, 9.0)).item()
    assert err < 1.0, err  # the trained model, not a fresh one


def test_a_failing_trial_does_not_stop_a_sweep_and_stop_then_resume_keep_the_finished(cluster, tmp_path):
    # A grid of 4: batch size 0 makes train.py fail (range() with step 0), so 2 of the 4 fail.
    conf, name = sweep_file(tmp_path, epochs=20, sampler="grid", pruner="none", trials=4, parallel=2, params={
        "lr": {"type": "categorical", "choices": [0.01, 0.1]},
        "batch_size": {"type": "categorical", "choices": [64, 0]}})
    proc = subprocess.Popen([*TFYARN, "sweep", "--conf", str(conf)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        wait_for("two trials ended", lambda: started(name) and len(ended(name)) >= 2, timeout_s=300, every_s=3)
        stop = tfyarn("sweep", "stop", name, timeout=120)
        assert stop.returncode == 0, stop.stderr
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130 and f"tfyarn sweep resume {name}" in err, err
    finally:
        if proc.poll() is None:
            proc.kill()
    before = ended(name)
    assert len(before) >= 2, status(name)
    resumed = tfyarn("sweep", "resume", name, timeout=600)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    final = status(name)
    counted = [t for t in final if t["state"] != "STOPPED"]
    assert len(counted) == 4, final  # the finished ones kept, the stopped ones run again
    kept = lambda t: {k: v for k, v in t.items() if k != "best"}  # noqa: E731 (the best may change)
    assert all(kept(t) in map(kept, final) for t in before)  # none of those before the stop was lost or rerun
    failed = [t for t in counted if t["state"] == "FAIL"]
    assert failed and all(t["params"]["batch_size"] == 0 for t in failed), final
    assert all("its job FAILED" in t["why"] for t in failed), failed
    assert any(t["state"] == "COMPLETE" for t in counted), final



def started(name: str) -> bool:
    """Its spec is saved, so `sweep status` answers."""
    return (Path.home() / ".tfyarn" / "sweeps" / f"{name}.yaml").exists()


def ended(name: str) -> list[dict]:
    return [t for t in status(name) if t["state"] in ("COMPLETE", "FAIL")]


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    """A PostgreSQL server of Debian's package on a free loopback port: its SQLAlchemy URL."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found:
        pytest.fail("PostgreSQL is not installed: `make postgres` installs Debian's postgresql")
    bin_dir = found[-1].parent
    as_pg = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []  # it refuses to run as root
    home = Path(tempfile.mkdtemp(prefix="tfyarn-pg-"))
    if as_pg:
        shutil.chown(home, "postgres")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = home / "data"
    run = lambda *a: subprocess.run([*as_pg, *map(str, a)], check=True, capture_output=True, timeout=120)  # noqa: E731
    run(bin_dir / "initdb", "-D", data, "-A", "trust", "-U", "tfyarn", "--no-sync")
    opts = f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off"
    run(bin_dir / "pg_ctl", "-D", data, "-l", home / "log", "-w", "-o", opts, "start")
    try:
        yield f"postgresql+psycopg2://tfyarn@127.0.0.1:{port}/postgres"
    finally:
        run(bin_dir / "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
        shutil.rmtree(home, ignore_errors=True)


def test_a_sweep_keeps_its_study_in_postgresql_and_is_warned_of_a_parallel_the_queue_cannot_hold(
        cluster, tmp_path, postgres):
    conf, name = sweep_file(tmp_path, epochs=2, storage=postgres, trials=2, parallel=64, pruner="none",
                            sampler="random")
    res = tfyarn("sweep", "--conf", str(conf), timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    # The warning's numbers are the real queue's: it holds what the cluster's NodeManagers offer.
    said = re.search(r"parallel is 64, but queue default holds at most (\d+) trial\(s\) at once \(each asks "
                     r"(\d+) MiB, (\d+) vcores; the queue holds (\d+) MiB, (\d+) vcores\)", res.stderr)
    assert said, res.stderr
    fit, mb, vcores, room_mb, room_vcores = map(int, said.groups())
    with urllib.request.urlopen(f"{cluster.layout.rm_web}/ws/v1/cluster/metrics", timeout=10) as r:
        metrics = json.load(r)["clusterMetrics"]
    assert (room_mb, room_vcores) == (metrics["totalMB"], metrics["totalVirtualCores"]), metrics
    assert fit == min(room_mb // mb, room_vcores // vcores) and 1 <= fit < 64
    # The study is in PostgreSQL, not in a file here, and `sweep status` reads it from there.
    assert not (Path.home() / ".tfyarn" / "sweeps" / f"{name}.db").exists()
    study = optuna.load_study(study_name=name, storage=postgres)
    done = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert len(done) == 2, study.trials
    rows = status(name)
    assert sorted(r["objective"] for r in rows) == sorted(t.value for t in done)

