#!/usr/bin/env bash
# TF2 MultiWorkerMirroredStrategy on YARN: NUM_WORKERS workers (default 2), the same script on each.
# A template: counts and memory come from the environment, e.g. NUM_WORKERS=4 WORKER_MEMORY=4g ./submit.sh
# Arguments go to train.py, e.g.: ./submit.sh --epochs 2 --model-dir /shared/model
# Any tfyarn flag, last so it wins: TFYARN_SUBMIT_FLAGS="--dry-run --worker-gpus 1" ./submit.sh
set -euo pipefail
cd "$(dirname "$0")"
exec ${TFYARN:-tfyarn} submit --framework tensorflow --name tf-multi-worker \
  --num-workers "${NUM_WORKERS:-2}" --worker-memory "${WORKER_MEMORY:-1536m}" \
  --file train.py --wait ${TFYARN_SUBMIT_FLAGS:-} -- python train.py "$@"
