"""`tfyarn sweep` on the real cluster: trials are tfyarn jobs training a small real PyTorch model.

The example sweep (examples/sweep): 8 trials, 2 at a time, a log-uniform learning rate and a
categorical batch size; the median pruner kills at least one; the best trial's learning rate is
where the model trains well, and its model, fetched from HDFS, loads and predicts. A second sweep
on a grid: a trial that fails does not stop it, and a stop then a resume keep the finished trials.
"""
from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

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
    assert all(t in final for t in before)  # none of those before the stop was lost or rerun
    failed = [t for t in counted if t["state"] == "FAIL"]
    assert failed and all(t["params"]["batch_size"] == 0 for t in failed), final
    assert all("its job FAILED" in t["why"] for t in failed), failed
    assert any(t["state"] == "COMPLETE" for t in counted), final



def started(name: str) -> bool:
    """Its spec is saved, so `sweep status` answers."""
    return (Path.home() / ".tfyarn" / "sweeps" / f"{name}.yaml").exists()


def ended(name: str) -> list[dict]:
    return [t for t in status(name) if t["state"] in ("COMPLETE", "FAIL")]
