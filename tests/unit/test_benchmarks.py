"""The benchmark scripts stay runnable: they refuse loudly without a cluster, and am_scale runs in-process."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script", ["startup.py", "ddp_overhead.py", "staging.py"])
def test_cluster_benchmarks_fail_loudly_when_the_cluster_is_not_up(script, tmp_path, monkeypatch):
    monkeypatch.setenv("TFYARN_CLUSTER_DIR", str(tmp_path / "no-cluster"))
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "--help"], capture_output=True,
                         text=True)
    assert res.returncode == 0 and "usage" in res.stdout  # --help works anywhere
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script)], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "the local cluster is not running; start it with `tfyarn cluster up`" in res.stderr
    assert "{" not in res.stdout  # no result line when nothing was measured


def test_am_scale_prints_its_table_and_a_json_line_with_the_targets():
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "am_scale.py"), "--tasks", "100"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    result = json.loads(res.stdout.strip().splitlines()[-1])
    assert result["benchmark"] == "am_scale" and result["tasks"] == 100
    assert set(result["targets_met"]) == {"register_and_view_cpu_s<1", "status_json_ms<100", "peak_rss_mib<300"}
    assert result["registration of all tasks + cluster view"] > 0


def test_paired_ratios_are_taken_per_round_and_show_their_spread():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from _paired import paired
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    # The second round ran on a loaded machine: both runners slowed; the per-round ratio did not move.
    p = paired([5.0, 10.0, 5.5], [6.25, 12.5, 5.0])
    assert (p.median, p.low, p.high, p.rounds) == (0.8, 0.8, 1.1, 3)
    assert p.text() == "0.80 (0.80-1.10, 3 pairs)"
    with pytest.raises(ValueError):
        paired([1.0], [0.0])


def test_the_cpu_sampler_counts_a_process_own_cpu_by_its_part():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from _proccpu import CpuSampler, platform_part
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    assert platform_part("python -m appmaster.executor") == "executors"
    assert platform_part("java -Xmx128M com.anaconda.skein.ApplicationMaster hdfs://x") == "am_jvm"
    assert platform_part("python train.py") is None
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass\n"
    with CpuSampler(lambda cmd: "burner" if "BURNER" in cmd else None) as s:
        subprocess.run([sys.executable, "-c", burn, "BURNER"], check=True)
    assert 0.35 < s.by_part()["burner"] <= 0.7, s.by_part()
