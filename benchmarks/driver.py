"""driver: what a skein global driver saves per tfyarn command, side by side in one run.

Runs `tfyarn list` (and `tfyarn nodes`) --runs times each with a Java driver of
its own per command (TFYARN_OWN_DRIVER=1) and with a global driver started
once (`skein driver start`, in a skein config dir of its own), interleaved so
that machine noise hits both alike. Prints medians, the saving and the ratio,
then one JSON line.

    tfyarn cluster up && python benchmarks/driver.py [--runs 7]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKEIN = str(Path(sys.executable).parent / "skein")
COMMANDS = (["list"], ["nodes"])


def timed(args: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tfyarn", *args], env=env, check=True, capture_output=True, timeout=300)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    runs = ap.parse_args().runs
    from tfyarn import hadoop_env
    from tfyarn.errors import UnreachableError

    try:
        hadoop = hadoop_env.discover()
        hadoop_env.check_reachable(hadoop)
    except UnreachableError as e:
        print(f"driver: {e}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="tfyarn-bench-skein-") as cfg:
        shared = {**os.environ, "HADOOP_CONF_DIR": str(hadoop.conf_dir), "PATH": hadoop.path, "SKEIN_CONFIG": cfg}
        own = {**shared, "TFYARN_OWN_DRIVER": "1"}
        t0 = time.perf_counter()
        subprocess.run([SKEIN, "driver", "start"], env=shared, check=True, capture_output=True, timeout=120)
        start_s = time.perf_counter() - t0
        try:
            rows = {}
            for args in COMMANDS:
                mine, theirs = [], []
                for _ in range(runs):
                    mine.append(timed(args, own))
                    theirs.append(timed(args, shared))
                a, b = statistics.median(mine), statistics.median(theirs)
                rows[" ".join(args)] = {"own_driver_s": round(a, 3), "global_driver_s": round(b, 3),
                                        "saved_s": round(a - b, 3), "ratio": round(a / b, 2)}
        finally:
            subprocess.run([SKEIN, "driver", "stop"], env=shared, capture_output=True, timeout=60)
    print(f"driver: median of {runs} runs each, interleaved; `skein driver start` took {start_s:.2f} s once")
    print(f"{'tfyarn ...':<14}{'own driver s':>14}{'global s':>10}{'saved s':>9}{'ratio':>7}")
    for name, r in rows.items():
        print(f"{name:<14}{r['own_driver_s']:>14.3f}{r['global_driver_s']:>10.3f}{r['saved_s']:>9.3f}"
              f"{r['ratio']:>7.2f}")
    print(json.dumps({"benchmark": "driver", "runs": runs, "driver_start_s": round(start_s, 3), "cases": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
