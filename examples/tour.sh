#!/usr/bin/env bash
# The README's quick tour, the commands exactly as the README shows them; `make demo` runs it.
# Data to HDFS, a distributed TensorFlow job that stages it in and publishes its model to HDFS,
# the model fetched back and scored. tests/unit/test_readme_tour.py keeps this file and the README
# the same; tests/integration/test_readme_tour.py runs the README's copy on the real cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
# tour:begin
source .venv/bin/activate          # the repo's venv (a `pip install` puts tfyarn on PATH instead)
tfyarn cluster up                  # a local Hadoop 3.5 cluster, YARN and HDFS, from Maven Central's jars
eval "$(tfyarn cluster env)"       # its hdfs, yarn and HADOOP_CONF_DIR, in this shell
python examples/make_data.py --out /tmp/tour-data               # a small regression data set
hdfs dfs -mkdir -p /data/tour && hdfs dfs -put -f /tmp/tour-data/* /data/tour/
TFYARN_SUBMIT_FLAGS="--input hdfs:///data/tour --output model:hdfs:///models/tour --overwrite" \
  examples/tensorflow/ps_strategy/submit.sh                      # 1 chief, 2 workers, 1 ps; waits
tfyarn fetch hdfs:///models/tour /tmp/tour-model                 # the chief's model/, from HDFS
python examples/tensorflow/ps_strategy/predict.py /tmp/tour-model /tmp/tour-data
# tour:end
