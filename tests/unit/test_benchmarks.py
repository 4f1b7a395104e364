"""The benchmark scripts stay runnable: they refuse loudly without a cluster, and am_scale runs in-process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script", ["startup.py", "ddp_overhead.py", "staging.py", "scale.py",
                                    "ps_throughput.py"])
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


def test_the_report_writes_the_readme_table_between_its_markers_from_the_json_lines(tmp_path):
    out = tmp_path / "bench"
    out.mkdir()
    startup = {"benchmark": "startup", "runs": 5, "cases": {"ddp (2 workers)": {
        "median_s": {"tfyarn": 3.2, "floor": 4.0}, "tfyarn_over_floor": {"median": 0.79, "low": 0.7, "high": 0.9,
                                                                        "pairs": 5}}}}
    staging = {"benchmark": "staging", "files": 64, "bytes": 1 << 30, "rounds": 3, "tfyarn_s": 3.0, "hdfs_get_s": 6.3,
               "read_limit_s": 2.5, "paired_speedup": {"median": 2.1, "low": 1.9, "high": 2.4, "pairs": 3},
               "share_of_limit": {"median": 0.83, "low": 0.8, "high": 0.9, "pairs": 3}}
    (out / "startup.out").write_text("table\n" + json.dumps(startup) + "\n")
    (out / "staging.out").write_text(json.dumps(staging) + "\n")
    readme = tmp_path / "README.md"
    start = "<!-- bench-table:start (benchmarks/report.py writes this) -->"
    readme.write_text(f"# x\n\n{start}\nold figures\n<!-- bench-table:end -->\n\n## After\n")
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "report.py"), "--dir", str(out), "--write",
                          str(readme)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    text = readme.read_text()
    assert "old figures" not in text and text.endswith("<!-- bench-table:end -->\n\n## After\n")
    assert "| startup, ddp (2 workers), median of 5 | 3.20 s | floor 4.00 s | **0.79x** (0.70-0.90, 5 pairs) | " \
           "<= 0.8x floor: met |" in text
    assert ">= 2x in every round: **not met**" in text  # 1.9x in one round
    assert "| scale | not run this time |" in text and f"on {os.cpu_count()} cores" in text
    empty = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "report.py"), "--dir", str(tmp_path / "none")],
                           capture_output=True, text=True, timeout=60)
    assert empty.returncode == 2 and "run `make bench`" in empty.stderr
