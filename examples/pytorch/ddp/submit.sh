#!/usr/bin/env bash
# PyTorch DDP on YARN: 2 worker containers (gloo on CPU, nccl with GPUs); rank 0 saves the model.
# Set NPROC_PER_NODE=2 to run 2 processes per container through torchrun.
# Arguments go to train.py, e.g.: ./submit.sh --epochs 3 --model-dir /shared/model
# Extra tfyarn flags: TFYARN_SUBMIT_FLAGS="--dry-run" ./submit.sh
set -euo pipefail
cd "$(dirname "$0")"
exec ${TFYARN:-tfyarn} submit ${TFYARN_SUBMIT_FLAGS:-} --framework pytorch --name pytorch-ddp \
  --num-workers 2 --nproc-per-node "${NPROC_PER_NODE:-1}" --worker-memory 1536m \
  --file train.py --wait -- python train.py "$@"
