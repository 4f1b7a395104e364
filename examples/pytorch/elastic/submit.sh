#!/usr/bin/env bash
# Elastic PyTorch on YARN: training starts with MIN_WORKERS containers (default 2) and grows to MAX_WORKERS
# (default 3) as YARN grants them; a lost container is replaced alone while the others go on (from the
# checkpoint each keeps). Every rank saves the model; worker 0's copy is published with --output.
# A template: e.g. MIN_WORKERS=2 MAX_WORKERS=4 WORKER_MEMORY=4g ./submit.sh --steps 500
# Any tfyarn flag, last so it wins: TFYARN_SUBMIT_FLAGS="--dry-run --worker-gpus 1" ./submit.sh
set -euo pipefail
cd "$(dirname "$0")"
exec ${TFYARN:-tfyarn} submit --framework pytorch --name pytorch-elastic \
  --num-workers "${MIN_WORKERS:-2}:${MAX_WORKERS:-3}" --worker-memory "${WORKER_MEMORY:-1536m}" \
  --worker-restart on-failure --worker-max-restarts 2 \
  --file train.py --wait ${TFYARN_SUBMIT_FLAGS:-} -- python train.py "$@"
