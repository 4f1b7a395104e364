"""startup: seconds from submit to "every task's user process has started with its cluster configuration".

Side by side in one process run, the tools alternating within each run, on
the local cluster, for a TF job (chief + 2 workers + 1 ps) and a 2-worker
DDP job, every container 512 MiB and 1 vcore:
  (a) tfyarn: ``Client.submit`` of the job (its admission checks included);
      every role's command is the recorder below;
  (b) the floor: a bare skein application with the same containers, whose
      command is the same recorder;
  (c) criteo's tf-yarn 0.7.0 (``run_on_yarn``), whose experiment function
      records the time when tf-yarn hands it the cluster configuration
      (benchmarks/tf_yarn_job.py says exactly where).
The recorder takes time.time() as its first statement, then writes it into
the application's skein key-value store; a case ends when every task's
stamp is there. Each case is timed from just before its submit call, with
a skein driver already running (interpreter and driver start-up are not
counted for any of them; benchmarks/cli.py covers tfyarn's CLI).

Environment shipping, the same for all three: none. Every container runs
this machine's virtualenv interpreter from local disk. tfyarn: ``python_env:
local``. Floor: that interpreter's path in the script. tf-yarn only accepts
a .pex, so it gets ``env.pex``, a two-line shell launcher that execs the
same interpreter, put on HDFS once before timing (tf-yarn's own upload_env
caches on HDFS too); tf-yarn still zips and ships its own package on every
submit, as it always does (tfyarn's editable install is hidden from it).
tf-yarn 0.7.0 and its pure-Python dependencies are pip-installed once into
build/bench/tf-yarn-0.7.0 (not into the venv); benchmarks/tf_yarn_compat
lets it import on TF >= 2.16 (see there).

    tfyarn cluster up && python benchmarks/startup.py [--runs 5] [--cases tf,ddp] [--tools tfyarn,floor,tf-yarn]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _cluster import fail as _fail, require_cluster  # noqa: E402
from _paired import paired  # noqa: E402
from tfyarn import protocol  # noqa: E402

CASES = {
    "tf": ("tf ps (chief+2w+1ps)", "tensorflow", {"chief": 1, "worker": 2, "ps": 1}),
    "ddp": ("ddp (2 workers)", "pytorch", {"worker": 2}),
}
TOOLS = ("tfyarn", "floor", "tf-yarn")
MEMORY_MB = 512
TIMEOUT_S = 240.0
ATTEMPTS = 3  # tries per measurement; failed starts are reported, never hidden
RECORD = ("import time; t = time.time(); import os, skein; "
          "skein.ApplicationClient.from_current().kv['t/' + os.environ['SKEIN_CONTAINER_ID']] = repr(t).encode(); "
          "time.sleep(600)")
TF_YARN_DIR = ROOT / "build" / "bench" / "tf-yarn-0.7.0"
# tf-yarn 0.7.0 and the pure-Python packages it imports that the venv lacks (TF, torch, skein,
# pyarrow, fsspec come from the venv, as they would from a user's environment).
TF_YARN_PACKAGES = ("tf-yarn==0.7.0", "cluster-pack==0.3.19", "pex==2.105.2", "cloudpickle==3.1.3",
                    "webdataset==1.0.2", "braceexpand==0.1.7", "wheel-filename==2.1.0", "fire==0.7.1",
                    "termcolor==3.3.0")
PYENV_URI = "hdfs:///benchmarks/startup/env.pex"


def fail(msg: str) -> None:
    _fail("startup.py", msg)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def wait_stamps(app: object, total: int, deadline: float, what: str) -> list[float]:
    while len(stamps := app.kv.get_prefix("t/")) < total:  # type: ignore[attr-defined]
        if time.time() > deadline:
            raise RuntimeError(f"{what}: {len(stamps)} of {total} task(s) started within {TIMEOUT_S:.0f} s")
        time.sleep(0.1)
    return [float(v) for v in stamps.values()]


# -- (a) tfyarn ------------------------------------------------------------------
def tfyarn_once(client: object, sk: object, framework: str, roles: dict[str, int],
                memory_mb: int = MEMORY_MB) -> tuple[float, dict[str, float]]:
    from tfyarn.spec import JobSpec, RoleSpec

    cmd = (sys.executable, "-c", RECORD)
    spec = JobSpec(name="bench-startup-tfyarn", command=cmd, framework=framework,
                   roles={r: RoleSpec(r, n, memory_mb=memory_mb, command=cmd) for r, n in roles.items()},
                   allocation_timeout_s=int(TIMEOUT_S)).validate()
    t0 = time.time()
    app_id = client.submit(spec)  # type: ignore[attr-defined]
    try:
        stamps = wait_stamps(sk.connect(app_id), sum(roles.values()), t0 + TIMEOUT_S, "tfyarn")  # type: ignore[attr-defined]
        doc = None
        while time.time() < t0 + TIMEOUT_S:  # the AM's view of the same start, for the stages
            doc = client.live_doc(client.report(app_id))  # type: ignore[attr-defined]
            if doc and all("process_started" in t.timeline for t in doc.tasks):
                break
            time.sleep(0.2)
    finally:
        client.kill(app_id)  # type: ignore[attr-defined]
    stages: dict[str, float] = {"am_started": doc.timeline["am_started"] - t0} if doc else {}
    for stage in protocol.STAGES[2:-1]:
        if doc:
            stages[stage] = max(t.timeline[stage] for t in doc.tasks) - t0
    stages["user_code"] = max(stamps) - t0
    return max(stamps) - t0, stages


# -- (b) the floor ------------------------------------------------------------------
def floor_once(sk: object, roles: dict[str, int], memory_mb: int = MEMORY_MB) -> float:
    import skein

    services = {r: skein.Service(resources=skein.Resources(memory=memory_mb, vcores=1), instances=n,
                                 script=f"exec {sys.executable} -c \"{RECORD}\"\n")
                for r, n in roles.items()}
    spec = skein.ApplicationSpec(name="bench-startup-floor", services=services)
    t0 = time.time()
    app = sk.submit_and_connect(spec)  # type: ignore[attr-defined]
    try:
        stamps = wait_stamps(app, sum(roles.values()), t0 + TIMEOUT_S, "floor")
    finally:
        app.shutdown("KILLED")
    return max(stamps) - t0


# -- (c) tf-yarn 0.7.0 -----------------------------------------------------------------
def ensure_tf_yarn() -> None:
    """tf-yarn and its extra packages in their own directory, installed once."""
    marker = TF_YARN_DIR / ".installed"
    if marker.exists() and marker.read_text() == " ".join(TF_YARN_PACKAGES):
        return
    log(f"installing {', '.join(TF_YARN_PACKAGES)} into {TF_YARN_DIR} (once) ...")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--upgrade", "--no-deps",
                    "--target", str(TF_YARN_DIR), *TF_YARN_PACKAGES], check=True)
    marker.write_text(" ".join(TF_YARN_PACKAGES))


def ensure_pyenv(hdfs_put: Callable[[str, str], None]) -> None:
    """The .pex tf-yarn insists on: a launcher for this very interpreter, on HDFS."""
    with tempfile.TemporaryDirectory() as tmp:
        pex = os.path.join(tmp, "env.pex")
        with open(pex, "w") as f:
            f.write(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
        os.chmod(pex, 0o755)
        hdfs_put(pex, PYENV_URI)


def tf_yarn_pythonpath() -> str:
    return f"{TF_YARN_DIR}:{ROOT / 'benchmarks' / 'tf_yarn_compat'}"


def tf_yarn_once(sk: object, case: str, roles: dict[str, int]) -> float:
    name = f"bench-startup-tf-yarn-{uuid.uuid4().hex[:8]}"
    # tfyarn is installed editable in this venv: hidden from tf-yarn's `pip list -e`, which would
    # otherwise zip and ship the whole checkout; a tf-yarn user's environment would not hold it.
    env = {**os.environ, "PYTHONPATH": tf_yarn_pythonpath(), "PIP_EXCLUDE": "tfyarn"}
    log_path = ROOT / "build" / "bench" / "tf-yarn-client.log"
    out_log = open(log_path, "a")
    out_log.write(f"=== {name} ===\n")
    out_log.flush()
    proc = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "tf_yarn_job.py"), case, name, PYENV_URI,
                             tf_yarn_pythonpath()], stdout=subprocess.PIPE, stderr=out_log, text=True, env=env)
    app_id = ""
    try:
        t0 = _read_t0(proc)
        deadline = t0 + TIMEOUT_S
        while not app_id:
            if time.time() > deadline or proc.poll() is not None:
                raise RuntimeError(f"tf-yarn: no application {name} (client exit {proc.poll()}; "
                                   f"see build/bench/tf-yarn-client.log)")
            apps = sk.get_applications(states=["SUBMITTED", "ACCEPTED", "RUNNING"])  # type: ignore[attr-defined]
            app_id = next((a.id for a in apps if a.name == name), "")
            time.sleep(0.1)
        try:
            stamps = wait_stamps(sk.connect(app_id), sum(roles.values()), deadline, "tf-yarn")  # type: ignore[attr-defined]
        except Exception as e:
            out_log.flush()
            lines = [l for l in log_path.read_text().splitlines() if l.strip()]
            raise RuntimeError(f"{type(e).__name__}: {e}; tf-yarn's client said: {lines[-1] if lines else ''}") from e
        return max(stamps) - t0
    finally:
        if app_id:
            try:
                sk.kill_application(app_id)  # type: ignore[attr-defined]
            except Exception:
                pass  # it ended by itself (tf-yarn shuts its application down on an error)
        proc.kill()
        proc.wait()
        out_log.close()


def _read_t0(proc: subprocess.Popen[str]) -> float:
    """The tf-yarn client's ``T0`` line (it imports TensorFlow and starts its driver first)."""
    box: list[float] = []

    def read() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            if line.startswith("T0 ") and not box:
                box.append(float(line.split()[1]))
        # keep draining so tf-yarn's prints never block it

    threading.Thread(target=read, daemon=True).start()
    deadline = time.time() + 120
    while not box:
        if proc.poll() is not None or time.time() > deadline:
            raise RuntimeError("tf-yarn's client did not start; see build/bench/tf-yarn-client.log")
        time.sleep(0.05)
    return box[0]


def _ratio_text(r: object) -> str:
    """A paired ratio's median and spread, as Paired.text writes it; "-" where not measured."""
    if not isinstance(r, dict):
        return "-"
    return f"{r['median']:.2f} ({r['low']:.2f}-{r['high']:.2f}, {r['pairs']} pairs)"


# -- the run ------------------------------------------------------------------------
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cases", default="tf,ddp")
    ap.add_argument("--tools", default=",".join(TOOLS))
    args = ap.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    tools = [t for t in args.tools.split(",") if t]
    if bad := [c for c in cases if c not in CASES] + [t for t in tools if t not in TOOLS]:
        fail(f"unknown case or tool {bad}; cases: {', '.join(CASES)}; tools: {', '.join(TOOLS)}")
    cluster = require_cluster("startup.py")
    (ROOT / "build" / "bench").mkdir(parents=True, exist_ok=True)
    hdfs = str(cluster.layout.bin_dir / "hdfs")
    if "tf-yarn" in tools:
        ensure_tf_yarn()
        ensure_pyenv(lambda src, dst: (
            subprocess.run([hdfs, "dfs", "-mkdir", "-p", os.path.dirname(dst)], check=True),
            subprocess.run([hdfs, "dfs", "-put", "-f", src, dst], check=True)))

    from tfyarn.client import Client

    results: dict[str, dict[str, object]] = {}
    failures: dict[str, list[str]] = {t: [] for t in tools}
    with Client() as client:
        sk = client._skein  # one driver for tfyarn and the floor, started before any timing
        for case in cases:
            label, framework, roles = CASES[case]
            times: dict[str, list[float]] = {t: [] for t in tools}
            stages: list[dict[str, float]] = []
            for i in range(args.runs):
                for tool in tools:
                    for attempt in range(1, ATTEMPTS + 1):  # a start that fails is counted, then retried
                        try:
                            if tool == "tfyarn":
                                total, st = tfyarn_once(client, sk, framework, roles)
                                stages.append(st)
                            elif tool == "floor":
                                total = floor_once(sk, roles)
                            else:
                                total = tf_yarn_once(sk, case, roles)
                            break
                        except Exception as e:
                            failures[tool].append(f"{label} run {i + 1}: {type(e).__name__}: {e}".strip())
                            log(f"  {tool} failed to start ({failures[tool][-1]})"
                                + ("; retrying" if attempt < ATTEMPTS else ""))
                            if attempt == ATTEMPTS:
                                raise
                    times[tool].append(total)
                log(f"  {label} run {i + 1}/{args.runs}: " + ", ".join(f"{t} {v[-1]:.2f} s" for t, v in times.items()))
            med = {t: round(statistics.median(v), 2) for t, v in times.items()}
            r: dict[str, object] = {"median_s": med, "all_s": {t: [round(x, 2) for x in v] for t, v in times.items()}}
            if stages:
                r["tfyarn_stages_s"] = {k: round(statistics.median(s[k] for s in stages if k in s), 2)
                                        for k in stages[0]}
            if "tfyarn" in med and "floor" in med:
                r["tfyarn_minus_floor_s"] = round(med["tfyarn"] - med["floor"], 2)
                r["tfyarn_over_floor"] = paired(times["tfyarn"], times["floor"]).to_dict()
            if "tfyarn" in med and "tf-yarn" in med:
                r["tfyarn_over_tf_yarn"] = paired(times["tfyarn"], times["tf-yarn"]).to_dict()
            results[label] = r
    print(f"\nstartup: median of {args.runs} runs, seconds from submit to every task's user code running "
          f"with its cluster configuration")
    print(f"{'case':<22}" + "".join(f"{t:>9}" for t in tools) + f"{'a-floor':>9}  {'a/floor (paired)':<26}"
          f"{'a/tf-yarn (paired)':<26}")
    for label, r in results.items():
        med = r["median_s"]
        cells = [_ratio_text(r.get(k)) for k in ("tfyarn_over_floor", "tfyarn_over_tf_yarn")]
        print(f"{label:<22}" + "".join(f"{med[t]:>9.2f}" for t in tools)  # type: ignore[index]
              + f"{r.get('tfyarn_minus_floor_s', float('nan')):>9.2f}  {cells[0]:<26}{cells[1]:<26}")
    for label, r in results.items():
        if "tfyarn_stages_s" in r:
            st = " ".join(f"{k}={v}" for k, v in r["tfyarn_stages_s"].items())  # type: ignore[union-attr]
            print(f"  tfyarn stages, {label} (latest task, s from submit): {st}")
    for tool, why in failures.items():
        if why:
            print(f"  {tool}: {len(why)} failed start(s), retried: " + "; ".join(w[:160] for w in why))
    print("targets: tfyarn <= 0.8 x the floor (median of per-round ratios) and <= 0.6 x tf-yarn")
    print(json.dumps({"benchmark": "startup", "runs": args.runs, "cases": results,
                      "failed_starts": {t: len(w) for t, w in failures.items()},
                      "conditions": "no environment shipped by any: every container runs this venv's python from "
                                    "local disk (tf-yarn through a 2-line env.pex launcher on HDFS); 512 MiB, "
                                    "1 vcore per container; timed from the submit call with a skein driver "
                                    "running; end = last task's first user statement with its cluster config"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
