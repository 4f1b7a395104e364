#!/usr/bin/env bash
# PyTorch DDP on YARN: NUM_WORKERS worker containers (default 2; gloo on CPU, nccl with GPUs); rank 0 saves
# the model. NPROC_PER_NODE=2 runs 2 processes per container through torchrun.
# A template: counts and memory come from the environment, e.g. NUM_WORKERS=4 WORKER_MEMORY=4g ./submit.sh
# Arguments go to train.py, e.g.: ./submit.sh --epochs 3 --model-dir /shared/model
# Any tfyarn flag, last so it wins: TFYARN_SUBMIT_FLAGS="--dry-run --worker-gpus 1" ./submit.sh
set -euo pipefail
cd "$(dirname "$0")"
exec ${TFYARN:-tfyarn} submit --framework pytorch --name pytorch-ddp \
  --num-workers "${NUM_WORKERS:-2}" --nproc-per-node "${NPROC_PER_NODE:-1}" --worker-memory "${WORKER_MEMORY:-1536m}" \
  --file train.py --wait ${TFYARN_SUBMIT_FLAGS:-} -- python train.py "$@"
