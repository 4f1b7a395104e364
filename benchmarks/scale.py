"""scale: start-up against the bare-skein floor as jobs grow, with real containers on the local cluster.

For each size (default 4, 16, 48 tasks) and each kind of job, side by side in
one run, the two alternating (which one goes first alternates too):
  (a) tfyarn: a job of N workers, framework `none` or a DDP job (pytorch), every
      task 256 MiB and 1 vcore, whose command is startup.py's recorder;
  (b) the floor: a bare skein application with N such containers running the
      same recorder.
A run ends when every task's recorder has written its first-statement time
into the application's key-value store (see startup.py). Printed per size:
the medians, the ratio tfyarn / floor taken per round (median and spread),
and the AM's CPU seconds (its Python script and skein's JVM, from /proc, from
submit until every task ran) and peak resident memory during that start.
Target (issue 19): ratio <= 1.1 at 48 tasks. 48 tasks need 49 vcores: run it
on a cluster of 4 nodes (`tfyarn cluster up --nodes 4`, 64 vcores).

    tfyarn cluster up --nodes 4 && python benchmarks/scale.py [--sizes 4,16,48] [--runs 3] [--kinds none,ddp]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _cluster import fail as _fail, require_cluster  # noqa: E402, I001
from _paired import paired  # noqa: E402
from _proccpu import CpuSampler, platform_part  # noqa: E402
from startup import floor_once, tfyarn_once  # noqa: E402

KINDS = {"none": "none", "ddp": "pytorch"}
MEMORY_MB = 256


def _am(cmdline: str) -> str | None:
    """The AM's two processes, as _proccpu names them; nothing else."""
    part = platform_part(cmdline)
    return part if part in ("am_script", "am_jvm") else None


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="4,16,48")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--kinds", default="none,ddp")
    args = ap.parse_args()
    try:
        sizes = [int(x) for x in args.sizes.split(",") if x]
    except ValueError:
        _fail("scale.py", f"--sizes {args.sizes!r}: a comma-separated list of task counts, e.g. 4,16,48")
    kinds = [k for k in args.kinds.split(",") if k]
    if bad := [k for k in kinds if k not in KINDS]:
        _fail("scale.py", f"unknown kind(s) {bad}; kinds: {', '.join(KINDS)}")
    require_cluster("scale.py")
    from tfyarn.client import Client

    rows: list[dict[str, object]] = []
    with Client() as client:
        sk = client._skein
        for kind in kinds:
            for n in sizes:
                times: dict[str, list[float]] = {"tfyarn": [], "floor": []}
                am_cpu: list[float] = []
                am_rss: list[float] = []
                for i in range(args.runs):
                    order = ["tfyarn", "floor"] if i % 2 == 0 else ["floor", "tfyarn"]
                    for tool in order:
                        if tool == "tfyarn":
                            with CpuSampler(_am) as cpu:
                                total, _stages = tfyarn_once(client, sk, KINDS[kind], {"worker": n}, MEMORY_MB)
                            am_cpu.append(sum(cpu.by_part().values()))
                            am_rss.append(sum(cpu.peak_rss_mib().values()))
                        else:
                            total = floor_once(sk, {"worker": n}, MEMORY_MB)
                        times[tool].append(total)
                    log(f"  {kind} x{n} run {i + 1}/{args.runs}: tfyarn {times['tfyarn'][-1]:.2f} s, "
                        f"floor {times['floor'][-1]:.2f} s")
                ratio = paired(times["tfyarn"], times["floor"])
                rows.append({"kind": kind, "tasks": n, "tfyarn_s": round(statistics.median(times["tfyarn"]), 2),
                             "floor_s": round(statistics.median(times["floor"]), 2), "ratio": ratio.to_dict(),
                             "am_cpu_s": round(statistics.median(am_cpu), 2),
                             "am_peak_rss_mib": round(max(am_rss), 1), "all_s": times})
    print(f"\nscale: start-up to every task's first statement, median of {args.runs} runs; "
          f"{MEMORY_MB} MiB, 1 vcore per task")
    print(f"{'job':<6}{'tasks':>6}{'tfyarn s':>10}{'floor s':>9}  {'tfyarn/floor (paired)':<28}{'AM CPU s':>9}"
          f"{'AM RSS MiB':>11}")
    for r in rows:
        rt = r["ratio"]
        text = f"{rt['median']:.2f} ({rt['low']:.2f}-{rt['high']:.2f}, {rt['pairs']} pairs)"  # type: ignore[index]
        print(f"{r['kind']:<6}{r['tasks']:>6}{r['tfyarn_s']:>10.2f}{r['floor_s']:>9.2f}  {text:<28}"
              f"{r['am_cpu_s']:>9.2f}{r['am_peak_rss_mib']:>11.1f}")
    biggest = max(sizes)
    met = all(r["ratio"]["median"] <= 1.1 for r in rows if r["tasks"] == biggest)  # type: ignore[index]
    print(f"target: tfyarn / floor <= 1.1 at {biggest} tasks: {'met' if met else 'not met'}")
    print(json.dumps({"benchmark": "scale", "runs": args.runs, "memory_mb": MEMORY_MB, "rows": rows,
                      "target_met": met}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
