"""cli: wall time of `tfyarn --help` and `tfyarn submit --dry-run` for the ps example.

Also checks what each imports: neither may load TensorFlow, torch or
pyarrow. Median of --runs runs each; a table and a JSON line.
Target (issue 7): `tfyarn --help` under 0.5 s.

    python benchmarks/cli.py [--runs 9]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PS = ROOT / "examples/tensorflow/ps_strategy"
HEAVY = ("tensorflow", "torch", "pyarrow")
CASES = {
    "tfyarn --help": ["--help"],
    "submit --dry-run (ps example)": ["submit", "--dry-run=yarn", "--framework", "tensorflow", "--chief",
                                      "--num-workers", "2", "--num-ps", "1", "--file", str(PS / "train.py"),
                                      "--", "python", "train.py"],
}


def imported(args: list[str]) -> list[str]:
    """Heavy top-level packages the command imports (python -X importtime)."""
    res = subprocess.run([sys.executable, "-X", "importtime", "-m", "tfyarn", *args], capture_output=True,
                         text=True, cwd=PS)
    names = {line.split("|")[-1].strip().split(".")[0] for line in res.stderr.splitlines() if "|" in line}
    return sorted(names & set(HEAVY))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    runs = ap.parse_args().runs
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "0"}
    rows = {}
    for name, args in CASES.items():
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "tfyarn", *args], capture_output=True, check=True, cwd=PS, env=env)
            times.append(time.perf_counter() - t0)
        rows[name] = {"median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3),
                      "heavy_imports": imported(args)}
    print(f"cli: median of {runs} runs ({sys.executable})")
    print(f"{'command':<34}{'median s':>10}{'min s':>8}  heavy imports")
    for name, r in rows.items():
        print(f"{name:<34}{r['median_s']:>10.3f}{r['min_s']:>8.3f}  {', '.join(r['heavy_imports']) or 'none'}")
    ok = rows["tfyarn --help"]["median_s"] < 0.5 and not any(r["heavy_imports"] for r in rows.values())
    print(json.dumps({"benchmark": "cli", "runs": runs, "cases": rows, "targets_met": ok}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
