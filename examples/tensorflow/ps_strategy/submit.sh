#!/usr/bin/env bash
# TF2 ParameterServerStrategy on YARN: 1 chief + 2 workers + 1 parameter server.
# You write only the chief's code (train.py); tfyarn runs TF servers for ps and workers.
# Arguments go to train.py, e.g.: ./submit.sh --epochs 2 --model-dir /shared/model
# Extra tfyarn flags: TFYARN_SUBMIT_FLAGS="--dry-run" ./submit.sh
set -euo pipefail
cd "$(dirname "$0")"
exec ${TFYARN:-tfyarn} submit ${TFYARN_SUBMIT_FLAGS:-} --framework tensorflow --name tf-ps-strategy \
  --chief --num-workers 2 --num-ps 1 \
  --chief-memory 1536m --worker-memory 1g --ps-memory 1g \
  --file train.py --wait -- python train.py "$@"
