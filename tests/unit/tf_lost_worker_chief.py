"""A ParameterServerStrategy chief on loopback that loses a worker mid-training, then ends.

Run by test_tensorflow_finish.py: ``python tf_lost_worker_chief.py finish|exit``.
It starts its own ps and two workers (servers of real TensorFlow), trains,
SIGKILLs worker 1 (a node lost), trains on, prints ``steps N``, then ends
with ``tfyarn.tensorflow.finish`` or a plain ``sys.exit``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

SERVER = """
import json, sys, tensorflow as tf
cluster, job, index = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
tf.distribute.Server(tf.train.ClusterSpec(cluster), job_name=job, task_index=index, start=True).join()
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main(how: str) -> None:
    cluster = {role: [f"127.0.0.1:{free_port()}" for _ in range(n)] for role, n in
               (("chief", 1), ("ps", 1), ("worker", 2))}
    os.environ["TF_CONFIG"] = json.dumps({"cluster": cluster, "task": {"type": "chief", "index": 0}})
    servers = {f"{role}:{i}": subprocess.Popen([sys.executable, "-c", SERVER, json.dumps(cluster), role, str(i)])
               for role in ("ps", "worker") for i in range(len(cluster[role]))}
    import tensorflow as tf

    from tfyarn.tensorflow import finish

    strategy = tf.distribute.ParameterServerStrategy(tf.distribute.cluster_resolver.TFConfigClusterResolver())
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    with strategy.scope():
        w = tf.Variable(0.0)

    @tf.function
    def step() -> tf.Tensor:
        w.assign_add(1.0)
        return w.read_value()

    for n in range(16):
        coordinator.schedule(step)
        coordinator.join()
        if n == 5:
            servers["worker:1"].kill()
            servers["worker:1"].wait()
        time.sleep(0.25)
    print("steps", int(w.numpy()), flush=True)
    for proc in servers.values():
        proc.kill()
    if how == "finish":
        finish(0)
    sys.exit(0)


if __name__ == "__main__":
    main(sys.argv[1])
