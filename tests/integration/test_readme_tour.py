"""The README's quick tour, its commands taken from the README and run as written, on the real cluster.

Data to HDFS, the PS example staging it in with --input and publishing its model with --output,
`tfyarn fetch`, and the fetched model scored: the loop a new user runs first (`make demo`).
"""
from __future__ import annotations

import pytest

import re
import shutil
import subprocess
from pathlib import Path

from tests.integration.conftest import app_id_from, status_json
from tests.unit.test_docs import readme_tour
from tfyarn.storage import filesystem

ROOT = Path(__file__).resolve().parents[2]
LOCAL = [Path("/tmp/tour-data"), Path("/tmp/tour-model")]
ON_HDFS = ["hdfs:///data/tour", "hdfs:///models/tour"]

# Needs the cluster to itself (tests/integration/conftest.py, Makefile's two phases): runs `tfyarn cluster up` as the README does.
pytestmark = pytest.mark.exclusive


def _clean() -> None:
    for path in LOCAL:
        shutil.rmtree(path, ignore_errors=True)
    for uri in ON_HDFS:
        fs, path = filesystem(uri)
        if fs.get_file_info(path).type.name != "NotFound":
            fs.delete_dir(path)


def test_the_readme_tour_runs_as_written(cluster, yarn_apps):
    _clean()  # nothing of an earlier run: the model below must be this run's, fetched now
    try:
        run = subprocess.run(["bash", "-euo", "pipefail", "-c", readme_tour()], cwd=ROOT, capture_output=True,
                             text=True, timeout=900)
        out = run.stdout + run.stderr
        app = app_id_from(out)
        yarn_apps.append(app)
        assert run.returncode == 0, out[-6000:]
        assert re.search(rf"Tracking URL: http://\S+/proxy/{app}/", out), out[-3000:]
        assert re.search(rf"Status page: http://\S+/proxy/{app}/pages/tfyarn/", out), out[-3000:]
        assert "SUCCEEDED: all 1 chief task(s) succeeded" in out
        doc = status_json(app)
        assert doc["state"] == "SUCCEEDED"
        assert [o["dest"] for o in doc["outputs"]] == ["hdfs:///models/tour"]
        chief = next(t for t in doc["tasks"] if t["name"] == "chief:0")
        assert chief["staging_bytes"] > 0  # --input staged the data set into the chief's container
        assert (LOCAL[1] / "saved_model" / "saved_model.pb").exists()  # fetched from HDFS
        m = re.search(r"MSE ([\d.]+) on 4096 samples \(predicting the mean: ([\d.]+)\)", out)
        assert m, out[-3000:]
        mse, baseline = map(float, m.groups())
        assert mse < 0.2 * baseline, (mse, baseline)  # the fetched model was trained
    finally:
        _clean()
