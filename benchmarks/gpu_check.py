"""The body of gpu_check.sh: nccl DDP under tfyarn's GPU binding, with NVML telemetry."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from appmaster.am.gpus import DevicePool  # noqa: E402
from appmaster.executor import gpus  # noqa: E402
from tfyarn.frameworks import PYTORCH  # noqa: E402


def main() -> int:
    try:
        import pynvml

        pynvml.nvmlInit()
        count = pynvml.nvmlDeviceGetCount()
        names = [pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(i)) for i in range(count)]
    except Exception as e:
        print(f"gpu_check: no NVIDIA GPU through NVML ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    print(f"gpu_check: {count} GPU(s): {names}")
    nproc = 2
    asked = min(nproc, count)
    # One container asking `asked` GPUs, bound by the AM's fallback pool as on a cluster without
    # the LinuxContainerExecutor; a second container on the node would get the others.
    devices = DevicePool().bind("localhost", "worker:0", asked, list(range(count)))
    env = {**os.environ, **gpus.cuda_env(devices), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29533",
           "WORLD_SIZE": "1", "RANK": "0", "PYTHONPATH": str(ROOT),
           "PATH": f"{os.path.dirname(sys.executable)}:{os.environ.get('PATH', '')}"}
    print(f"gpu_check: bound devices {devices}: CUDA_VISIBLE_DEVICES={env['CUDA_VISIBLE_DEVICES']}")
    if asked < nproc:
        # nccl refuses two ranks on one device; with one GPU, 2 processes share it only under gloo.
        print(f"gpu_check: only {count} GPU: running {asked} nccl process(es) instead of {nproc}")
        nproc = asked
    view = {"worker": ["127.0.0.1:29533"]}
    model_dir = tempfile.mkdtemp(prefix="gpu-check-")
    cmd = PYTORCH.wrap_command([sys.executable, str(ROOT / "examples/pytorch/ddp/train.py"), "--epochs", "30",
                                "--samples", "65536", "--batch-size", "256", "--model-dir", model_dir],
                               0, view, nproc, "gpu-check")
    print("gpu_check: runs", " ".join(cmd))
    stop = threading.Event()
    peak: dict[int, int] = {}

    def sample() -> None:
        while not stop.wait(1.0):
            for g in gpus.telemetry(devices) or []:
                peak[g["index"]] = max(peak.get(g["index"], 0), g["util_pct"])
                print(f"gpu_check: GPU {g['index']}: {g['util_pct']}% util, "
                      f"{g['mem_used_mib']}/{g['mem_total_mib']} MiB", flush=True)

    threading.Thread(target=sample, daemon=True).start()
    t0 = time.time()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    stop.set()
    print(proc.stdout[-4000:])
    if proc.returncode != 0:
        print(proc.stderr[-4000:], file=sys.stderr)
        return proc.returncode
    results = [json.loads(ln.split(" ", 1)[1]) for ln in proc.stdout.splitlines() if ln.startswith("TFYARN_RESULT ")]
    ok = len(results) == nproc and all(r["backend"] == "nccl" for r in results)
    used = sorted({r["device"] for r in results})
    print(json.dumps({"gpus": count, "bound": devices, "processes": nproc, "devices_used": used,
                      "backend": sorted({r["backend"] for r in results}), "peak_util_pct": peak,
                      "steps_per_second": [round(r["steps_per_second"], 1) for r in results],
                      "seconds": round(time.time() - t0, 1), "ok": ok}))
    return 0 if ok and len(used) == nproc else 1


if __name__ == "__main__":
    sys.exit(main())
