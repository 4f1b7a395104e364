#!/usr/bin/env bash
# TF2 ParameterServerStrategy on YARN: 1 chief + NUM_WORKERS workers + NUM_PS parameter servers.
# You write only the chief's code (train.py); tfyarn runs TF servers for ps and workers.
# A template: counts and memory come from the environment, e.g. NUM_WORKERS=4 NUM_PS=2 ./submit.sh
# Arguments go to train.py, e.g.: ./submit.sh --epochs 2 --model-dir /shared/model
# Any tfyarn flag, last so it wins: TFYARN_SUBMIT_FLAGS="--dry-run --output ./model:hdfs:///models/ps" ./submit.sh
set -euo pipefail
cd "$(dirname "$0")"
exec ${TFYARN:-tfyarn} submit --framework tensorflow --name tf-ps-strategy \
  --chief --num-workers "${NUM_WORKERS:-2}" --num-ps "${NUM_PS:-1}" \
  --chief-memory "${CHIEF_MEMORY:-1536m}" --worker-memory "${WORKER_MEMORY:-1g}" --ps-memory "${PS_MEMORY:-1g}" \
  --file train.py --wait ${TFYARN_SUBMIT_FLAGS:-} -- python train.py "$@"
