#!/usr/bin/env bash
# TF2 MultiWorkerMirroredStrategy on YARN: 2 workers, the same script on each.
# Arguments go to train.py, e.g.: ./submit.sh --epochs 2 --model-dir /shared/model
# Extra tfyarn flags: TFYARN_SUBMIT_FLAGS="--dry-run" ./submit.sh
set -euo pipefail
cd "$(dirname "$0")"
exec ${TFYARN:-tfyarn} submit ${TFYARN_SUBMIT_FLAGS:-} --framework tensorflow --name tf-multi-worker \
  --num-workers 2 --worker-memory 1536m \
  --file train.py --wait -- python train.py "$@"
