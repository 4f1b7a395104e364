#!/usr/bin/env bash
# PyTorch DDP streaming Parquet shards from HDFS in its training loop (no --input staging): each of
# NUM_WORKERS ranks reads every NUM_WORKERS-th shard. Make the data first:
#   python make_shards.py --out hdfs:///data/shards
# A template: counts and memory come from the environment, e.g. NUM_WORKERS=4 WORKER_MEMORY=2g ./submit.sh
# Arguments go to train.py (DATA sets --data), e.g.: DATA=hdfs:///data/other ./submit.sh --epochs 5
# Any tfyarn flag, last so it wins: TFYARN_SUBMIT_FLAGS="--output model:hdfs:///models/streaming" ./submit.sh
set -euo pipefail
cd "$(dirname "$0")"
exec ${TFYARN:-tfyarn} submit --framework pytorch --name pytorch-streaming \
  --num-workers "${NUM_WORKERS:-2}" --worker-memory "${WORKER_MEMORY:-1536m}" \
  --file train.py --wait ${TFYARN_SUBMIT_FLAGS:-} -- python train.py --data "${DATA:-hdfs:///data/shards}" "$@"
