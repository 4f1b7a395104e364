#!/usr/bin/env bash
# GPU check, for a machine with real NVIDIA GPUs (driver, torch with CUDA, nvidia-ml-py):
# binds devices the way tfyarn's executor does (appmaster.am.gpus: the AM's fallback pool,
# CUDA_VISIBLE_DEVICES in PCI order), runs the DDP example with nccl across 2 local
# processes (torchrun, as the executor starts them), and prints per-GPU utilisation
# read through pynvml every second. Exits non-zero if anything is off. Under 5 minutes.
#   bash benchmarks/gpu_check.sh            # uses .venv/bin/python if present
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
exec timeout 300 "$PY" benchmarks/gpu_check.py "$@"
