"""ddp_overhead: training speed of the DDP example through tfyarn against torchrun on the same machine.

Side by side in one run, alternating for --rounds rounds:
  (a) tfyarn: examples/pytorch/ddp/submit.sh (2 worker containers, one
      process each, gloo on CPU) on the local cluster;
  (b) torchrun --nproc-per-node 2 --standalone examples/pytorch/ddp/train.py
      directly on this machine.
Same script, same synthetic data (seeded), same epochs, samples and batch
size. Each rank reports the steps per second of its training loop (from
its first step to its last, set-up excluded); a run's figure is the mean
over its ranks, a tool's the median over rounds. Wall time from the
command's start to its end is shown too (tfyarn's includes YARN start-up).
Target (issue 7): tfyarn >= 0.95 x torchrun's steps per second.

    tfyarn cluster up && python benchmarks/ddp_overhead.py [--rounds 5] [--epochs 40]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _cluster import require_cluster  # noqa: E402
from _paired import paired  # noqa: E402
from _proccpu import CpuSampler, platform_part  # noqa: E402

EXAMPLE = ROOT / "examples" / "pytorch" / "ddp"
TFYARN = [sys.executable, "-m", "tfyarn"]


def parse_results(text: str) -> list[dict]:
    """Every rank's TFYARN_RESULT object. torchrun's ranks share one stdout pipe, so one rank's line
    can land inside another's (a benchmark run once read only rank 0's): each marker is decoded
    where it stands, not per line."""
    decoder, out = json.JSONDecoder(), []
    for m in re.finditer(r"TFYARN_RESULT ", text):
        try:
            out.append(decoder.raw_decode(text, m.end())[0])
        except ValueError:
            continue
    return out


SHARES: list[tuple[dict[str, float], float, float]] = []  # each tfyarn run's steady ({part: CPU}, training CPU, s)


def _part(cmdline: str) -> str | None:
    return platform_part(cmdline) or ("training" if str(EXAMPLE / "train.py") in cmdline
                                      or " train.py" in cmdline else None)


def run_tfyarn(train_args: list[str], model_dir: str) -> tuple[list[dict], float]:
    env = {**os.environ, "TFYARN": " ".join(TFYARN)}
    t0 = time.time()
    with CpuSampler(_part) as cpu:
        proc = subprocess.run(["bash", str(EXAMPLE / "submit.sh"), "--model-dir", model_dir, *train_args],
                              env=env, capture_output=True, text=True)
    wall = time.time() - t0
    SHARES.append(cpu.steady_share("training"))
    found = re.search(r"application_\d+_\d+", proc.stdout + proc.stderr)
    if proc.returncode != 0 or not found:
        raise RuntimeError(f"tfyarn run failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    deadline = time.time() + 90
    while True:  # the ranks' lines are in the task logs once YARN has aggregated them
        out = subprocess.run([*TFYARN, "logs", found.group(0)], capture_output=True, text=True).stdout
        results = parse_results(out)
        if len(results) >= 2 or time.time() > deadline:
            return results, wall
        time.sleep(2)


def run_torchrun(train_args: list[str], model_dir: str) -> tuple[list[dict], float]:
    t0 = time.time()
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone",
                           str(EXAMPLE / "train.py"), "--model-dir", model_dir, *train_args],
                          capture_output=True, text=True, cwd=tempfile.gettempdir())
    wall = time.time() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"torchrun failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    return parse_results(proc.stdout), wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--samples", type=int, default=8192)
    ap.add_argument("--batch-size", type=int, default=32)
    args = ap.parse_args()
    require_cluster("ddp_overhead.py")
    train_args = ["--epochs", str(args.epochs), "--samples", str(args.samples), "--batch-size", str(args.batch_size)]
    runners = {"tfyarn": run_tfyarn, "torchrun": run_torchrun}
    rates: dict[str, list[float]] = {k: [] for k in runners}
    walls: dict[str, list[float]] = {k: [] for k in runners}
    steps = 0
    for i in range(args.rounds):
        order = list(runners.items()) if i % 2 == 0 else list(runners.items())[::-1]  # neither always first
        for name, runner in order:
            with tempfile.TemporaryDirectory() as tmp:
                results, wall = runner(train_args, os.path.join(tmp, "model"))
            if len(results) != 2 or {r["world_size"] for r in results} != {2}:
                raise RuntimeError(f"{name}: expected 2 ranks of a world of 2, got {results}")
            steps = results[0]["steps"]
            rates[name].append(statistics.mean(r["steps_per_second"] for r in results))
            walls[name].append(wall)
        print(f"  round {i + 1}/{args.rounds}: " + ", ".join(
            f"{k} {v[-1]:.0f} steps/s ({walls[k][-1]:.1f} s wall)" for k, v in rates.items()), file=sys.stderr)
    med = {k: statistics.median(v) for k, v in rates.items()}
    best = {k: max(v) for k, v in rates.items()}  # the least disturbed run: interference only slows
    ratio = med["tfyarn"] / med["torchrun"]
    best_ratio = best["tfyarn"] / best["torchrun"]
    print(f"\nddp_overhead: DDP example, 2 ranks (gloo, CPU), {steps} steps per rank "
          f"({args.epochs} epochs x {args.samples} samples / 2 ranks / batch {args.batch_size}); "
          f"median of {args.rounds} rounds")
    print(f"{'runner':<12}{'steps/s':>10}{'best':>10}{'wall s':>10}")
    for k in runners:
        print(f"{k:<12}{med[k]:>10.1f}{best[k]:>10.1f}{statistics.median(walls[k]):>10.1f}")
    pr = paired(rates["tfyarn"], rates["torchrun"])
    print(f"tfyarn / torchrun steps/s, per round: {pr.text()} (target >= 0.95); {ratio:.3f} of the medians, "
          f"{best_ratio:.3f} of the bests")
    shares = [sum(other.values()) / mine for other, mine, _s in SHARES if mine]
    share = statistics.median(shares) if shares else float("nan")
    parts = sorted({k for other, _m, _s in SHARES for k in other})
    by_part = {k: statistics.median(o.get(k, 0.0) / m for o, m, _s in SHARES if m) for k in parts}
    print(f"platform CPU while training runs (the middle 60% of it): {100 * share:.2f}% of the training's CPU, "
          f"median of {len(shares)} runs ({', '.join(f'{100 * x:.2f}%' for x in shares)}; target <= 2%); "
          + ", ".join(f"{k} {100 * v:.2f}%" for k, v in by_part.items()))
    print(json.dumps({"benchmark": "ddp_overhead", "rounds": args.rounds, "steps_per_rank": steps,
                      "steps_per_s": {k: round(v, 1) for k, v in med.items()},
                      "all_steps_per_s": {k: [round(x, 1) for x in v] for k, v in rates.items()},
                      "wall_s": {k: round(statistics.median(v), 1) for k, v in walls.items()},
                      "best_steps_per_s": {k: round(v, 1) for k, v in best.items()},
                      "ratio": round(ratio, 3), "best_ratio": round(best_ratio, 3),
                      "paired_ratio": pr.to_dict(), "platform_cpu_share": round(share, 4),
                      "platform_cpu_share_by_part": {k: round(v, 4) for k, v in by_part.items()},
                      "targets_met": {"paired_ratio>=0.95": pr.median >= 0.95, "platform_cpu<=2%": share <= 0.02}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
