"""Staging throughput: tfyarn's stager against `hdfs dfs -get`, side by side in one run.

Stages a directory of 64 files totalling 1 GiB from the local cluster's HDFS
into a local dir, alternating the two tools for --rounds rounds, and prints the
median times, the ratio taken per round (median and spread: both tools met the
same load in a round) and one JSON line. Each round also reads the same bytes
from HDFS into nothing, with as many threads (the DataNode's serving rate with
no local disk write): the limit staging could reach here; tfyarn's share of it
is printed. And each round writes as many bytes from memory into local files
with as many threads: the local write's own cost, which on 2 cores adds to the
read's (both take CPU; neither waits on a disk here). Not a timed test: machines are shared and noisy; compare the
numbers of the same run.

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
from concurrent.futures import ThreadPoolExecutor

from _cluster import require_cluster
from _paired import paired

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
    times: dict[str, list[float]] = {"tfyarn": [], "hdfs dfs -get": [], "read to nothing": [],
                                     "write from memory": []}
    for r in range(args.rounds):
        for tool in times:
            out = tempfile.mkdtemp(prefix="staging-bench-")
            t0 = time.monotonic()
            if tool == "read to nothing":
                assert read_all(src, args.threads) == TOTAL
            elif tool == "write from memory":
                write_all(out, args.threads)
            elif tool == "tfyarn":
                report = copy_tree(src, locate(parse_uri(os.path.join(out, "d"))), threads=args.threads)
                assert report.files == FILES and report.bytes == TOTAL
            else:
                subprocess.run([hdfs, "dfs", "-get", REMOTE, os.path.join(out, "d")], check=True)
            times[tool].append(time.monotonic() - t0)
            shutil.rmtree(out)
            print(f"round {r + 1}: {tool:<14} {times[tool][-1]:6.2f} s", file=sys.stderr)
    ours, theirs = statistics.median(times["tfyarn"]), statistics.median(times["hdfs dfs -get"])
    limit = statistics.median(times["read to nothing"])
    speedup = paired(times["hdfs dfs -get"], times["tfyarn"])
    share = paired(times["read to nothing"], times["tfyarn"])
    print(f"\nstaging {FILES} files / {TOTAL >> 20} MiB from HDFS, median of {args.rounds} "
          f"({os.cpu_count()} cores):")
    print(f"  {'tfyarn stager':<20}{ours:8.2f} s  {TOTAL / ours / 2**20:8.0f} MiB/s  ({args.threads} threads)")
    print(f"  {'hdfs dfs -get':<20}{theirs:8.2f} s  {TOTAL / theirs / 2**20:8.0f} MiB/s")
    print(f"  {'read to nothing':<20}{limit:8.2f} s  {TOTAL / limit / 2**20:8.0f} MiB/s  (the limit here)")
    print(f"  speed-up over hdfs dfs -get, per round: {speedup.text()} (target >= 2x in every round: "
          f"{'met' if speedup.low >= 2 else 'not met'})")
    print(f"  tfyarn's share of the limit, per round: {share.text()}")
    write = statistics.median(times["write from memory"])
    both = paired([r + w for r, w in zip(times["read to nothing"], times["write from memory"], strict=True)],
                  times["tfyarn"])
    print(f"  {'write from memory':<20}{write:8.2f} s  {TOTAL / write / 2**20:8.0f} MiB/s  (the local write alone)")
    print(f"  tfyarn against read + write done one after the other, per round: {both.text()}")
    print(json.dumps({"benchmark": "staging", "files": FILES, "bytes": TOTAL, "rounds": args.rounds,
                      "tfyarn_s": ours, "hdfs_get_s": theirs, "read_limit_s": limit,
                      "ratio": theirs / ours, "paired_speedup": speedup.to_dict(),
                      "share_of_limit": share.to_dict(), "write_s": write,
                      "share_of_read_plus_write": both.to_dict(), "all_s": times,
                      "cores": os.cpu_count(), "date": time.strftime("%Y-%m-%d")}))


def write_all(out: str, threads: int) -> None:
    """Write FILES files of TOTAL / FILES bytes each from one buffer in memory into ``out``, ``threads`` at a time."""
    buf = os.urandom(TOTAL // FILES)
    os.makedirs(os.path.join(out, "d"))

    def one(i: int) -> None:
        with open(os.path.join(out, "d", f"part-{i:05d}"), "wb") as f:
            f.write(buf)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, range(FILES)))


def read_all(src: object, threads: int) -> int:
    """Read every file under ``src`` into nothing, ``threads`` at a time: bytes read."""
    files = list_files(src)  # type: ignore[arg-type]
    fs = src.fs  # type: ignore[attr-defined]

    def one(path: str) -> int:
        n = 0
        with fs.open_input_stream(path) as f:
            while size := f.read_buffer(8 << 20).size:  # as the stager reads: no copy into bytes
                n += size
        return n

    paths = [f"{src.path.rstrip('/')}/{f.rel}" for f in files]  # type: ignore[attr-defined]
    with ThreadPoolExecutor(threads) as pool:
        return sum(pool.map(one, paths))


if __name__ == "__main__":
    main()
