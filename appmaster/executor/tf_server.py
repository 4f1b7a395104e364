"""The default command of ParameterServerStrategy's ps and worker tasks (tfyarn.frameworks.tensorflow).

They only serve: a standard TensorFlow server for the TF_CONFIG the
executor wrote, until the AM stops the task when the chief has finished.
"""

from __future__ import annotations

import json
import logging
import os
import sys

from tfyarn import logfmt


def main() -> int:
    os.environ.setdefault("GRPC_FAIL_FAST", "use_caller")  # as TF's PSS guide asks of servers
    import tensorflow as tf  # only here: the executor itself never imports TensorFlow

    config = json.loads(os.environ["TF_CONFIG"])
    task = config["task"]
    server = tf.distribute.Server(
        tf.train.ClusterSpec(config["cluster"]),
        job_name=task["type"],
        task_index=task["index"],
        protocol="grpc",
        start=True,
    )
    logfmt.setup("tfyarn.tf_server")
    logging.getLogger("tfyarn.tf_server").info(
        f"TensorFlow server {task['type']}:{task['index']} serving at {server.target}"
    )
    server.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
