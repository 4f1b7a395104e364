"""Staging throughput: tfyarn's stager against `hdfs dfs -get`, side by side in one run.

Stages a directory of 64 files totalling 1 GiB from the local cluster's HDFS
into a local dir, alternating the two tools for --rounds rounds, and prints the
median times, their ratio and one JSON line. Not a timed test: machines are
shared and noisy; compare the two numbers of the same run.

    tfyarn cluster up && python benchmarks/staging.py
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from _cluster import require_cluster

from tfyarn.storage import copy_tree, list_files, locate, parse_uri

FILES, TOTAL = 64, 1 << 30
REMOTE = "/benchmarks/staging-64x16MiB"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=10)
    args = p.parse_args()
    cluster = require_cluster("staging.py")
    hdfs = str(cluster.layout.bin_dir / "hdfs")
    src = locate(parse_uri(f"hdfs://{REMOTE}"))
    have = list_files(src) if src.exists() else []
    if len(have) != FILES or sum(f.size for f in have) != TOTAL:
        with tempfile.TemporaryDirectory() as tmp:
            print(f"writing {FILES} files, {TOTAL >> 20} MiB, to hdfs://{REMOTE} (once) ...", file=sys.stderr)
            for i in range(FILES):
                with open(os.path.join(tmp, f"part-{i:05d}"), "wb") as f:
                    f.write(os.urandom(TOTAL // FILES))
            subprocess.run([hdfs, "dfs", "-rm", "-r", "-f", "-skipTrash", REMOTE], capture_output=True)
            subprocess.run([hdfs, "dfs", "-mkdir", "-p", os.path.dirname(REMOTE)], check=True)
            subprocess.run([hdfs, "dfs", "-put", tmp, REMOTE], check=True)
    times: dict[str, list[float]] = {"tfyarn": [], "hdfs dfs -get": []}
    for r in range(args.rounds):
        for tool in times:
            out = tempfile.mkdtemp(prefix="staging-bench-")
            t0 = time.monotonic()
            if tool == "tfyarn":
                report = copy_tree(src, locate(parse_uri(os.path.join(out, "d"))), threads=args.threads)
                assert report.files == FILES and report.bytes == TOTAL
            else:
                subprocess.run([hdfs, "dfs", "-get", REMOTE, os.path.join(out, "d")], check=True)
            times[tool].append(time.monotonic() - t0)
            shutil.rmtree(out)
            print(f"round {r + 1}: {tool:<14} {times[tool][-1]:6.2f} s", file=sys.stderr)
    ours, theirs = statistics.median(times["tfyarn"]), statistics.median(times["hdfs dfs -get"])
    print(f"\nstaging {FILES} files / {TOTAL >> 20} MiB from HDFS, median of {args.rounds} "
          f"({os.cpu_count()} cores):")
    print(f"  {'tfyarn stager':<20}{ours:8.2f} s  {TOTAL / ours / 2**20:8.0f} MiB/s  ({args.threads} threads)")
    print(f"  {'hdfs dfs -get':<20}{theirs:8.2f} s  {TOTAL / theirs / 2**20:8.0f} MiB/s")
    print(f"  speed-up: {theirs / ours:.2f}x (target >= 2x)")
    print(json.dumps({"benchmark": "staging", "files": FILES, "bytes": TOTAL, "rounds": args.rounds,
                      "tfyarn_s": ours, "hdfs_get_s": theirs, "ratio": theirs / ours,
                      "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%d")}))


if __name__ == "__main__":
    main()
