"""startup: from submit to "every task's user process started with its cluster configuration".

Side by side in one process run, alternating, on the local cluster:
  (a) tfyarn: Client.submit of the job, until every task's executor has
      stamped process_started (it starts the user command right after
      writing TF_CONFIG / torchrun's variables), read from the status page;
  (b) the floor: a bare skein application with the same containers (same
      memory/vcores), whose command records time.time() first thing into
      skein's key-value store; the same local Python (no env shipping in
      either), the same skein client, timed from just before submit.
Cases: TF ps job (chief + 2 workers + 1 ps) and a 2-worker DDP job.
Median of --runs runs; per-stage medians from tfyarn's timeline.
Not done yet (issue 7): (c) criteo's tf-yarn 0.7.0 on the same cluster.

    tfyarn cluster up && python benchmarks/startup.py [--runs 5]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import skein  # noqa: E402

from tfyarn import protocol  # noqa: E402
from tfyarn.client import Client  # noqa: E402
from tfyarn.spec import JobSpec, RoleSpec  # noqa: E402

CASES = {
    "tf ps (chief+2w+1ps)": ("tensorflow", {"chief": 1, "worker": 2, "ps": 1}),
    "ddp (2 workers)": ("pytorch", {"worker": 2}),
}
MEMORY_MB = 512
RECORD = ("import time; t = time.time(); import os, skein; "
          "skein.ApplicationClient.from_current().kv['t/' + os.environ['SKEIN_CONTAINER_ID']] = repr(t).encode(); "
          "time.sleep(120)")


def tfyarn_once(client: Client, framework: str, roles: dict[str, int]) -> tuple[float, dict[str, float]]:
    spec = JobSpec(name="bench-startup", command=("python", "-c", "import time; time.sleep(120)"),
                   framework=framework, roles={r: RoleSpec(r, n, memory_mb=MEMORY_MB) for r, n in roles.items()},
                   allocation_timeout_s=120).validate()
    t0 = time.time()
    app_id = client.submit(spec)
    try:
        while True:
            rep = client.report(app_id)
            doc = client.live_status(rep) if rep.state.value == "RUNNING" else None
            tasks = (doc or {}).get("tasks") or []
            if tasks and all("process_started" in t["timeline"] for t in tasks):
                break
            if rep.state.is_terminal():
                raise RuntimeError(f"{app_id} ended {rep.state.value}: {rep.diagnostics}")
            time.sleep(0.2)
    finally:
        client.kill(app_id)
    stages: dict[str, float] = {"am_started": doc["timeline"]["am_started"] - t0}
    for stage in protocol.STAGES[2:-1]:
        stages[stage] = max(t["timeline"][stage] for t in tasks) - t0
    return max(t["timeline"]["process_started"] for t in tasks) - t0, stages


def floor_once(sk: skein.Client, roles: dict[str, int]) -> float:
    services = {r: skein.Service(resources=skein.Resources(memory=MEMORY_MB, vcores=1), instances=n,
                                 script=f"exec {sys.executable} -c \"{RECORD}\"\n")
                for r, n in roles.items()}
    spec = skein.ApplicationSpec(name="bench-floor", services=services)
    total = sum(roles.values())
    t0 = time.time()
    app = sk.submit_and_connect(spec)
    try:
        while len(stamps := app.kv.get_prefix("t/")) < total:
            time.sleep(0.2)
    finally:
        app.shutdown("KILLED")
    return max(float(v) for v in stamps.values()) - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    runs = ap.parse_args().runs
    results = {}
    with Client() as client:
        sk = client._skein  # the same driver for both, started before any timing
        for name, (framework, roles) in CASES.items():
            tf, fl, stages = [], [], []
            for i in range(runs):
                total, st = tfyarn_once(client, framework, roles)
                tf.append(total)
                stages.append(st)
                fl.append(floor_once(sk, roles))
                print(f"  {name} run {i + 1}: tfyarn {tf[-1]:.2f} s, floor {fl[-1]:.2f} s", file=sys.stderr)
            med = {k: round(statistics.median(s[k] for s in stages), 2) for k in stages[0]}
            results[name] = {"tfyarn_s": round(statistics.median(tf), 2), "floor_s": round(statistics.median(fl), 2),
                             "overhead_s": round(statistics.median(tf) - statistics.median(fl), 2),
                             "tfyarn_stages_s": med}
    print(f"startup: median of {runs} runs, seconds from submit to every user process started")
    print(f"{'case':<24}{'tfyarn':>8}{'floor':>8}{'over':>7}  tfyarn stages (latest task, from submit)")
    for name, r in results.items():
        st = " ".join(f"{k}={v}" for k, v in r["tfyarn_stages_s"].items())
        print(f"{name:<24}{r['tfyarn_s']:>8.2f}{r['floor_s']:>8.2f}{r['overhead_s']:>7.2f}  {st}")
    print(json.dumps({"benchmark": "startup", "runs": runs, "cases": results,
                      "conditions": "local Python on every container for both (no env shipping); same skein "
                                    "client; tf-yarn (c) not yet measured"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
