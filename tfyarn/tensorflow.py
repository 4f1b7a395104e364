"""Checkpoints and SavedModels under ParameterServerStrategy when tasks do not share a disk.

Under ParameterServerStrategy every ps task writes the shards of its own
variables: a relative path fails on the ps (``NOT_FOUND: ./model/ckpt_temp``),
and an absolute local path scatters the shards over the hosts. Routing the
I/O through the chief's CPU puts every shard on the chief's disk, in its
``--output`` dir, which tfyarn publishes::

    from tfyarn.tensorflow import checkpoint_options, saved_model_options
    tf.train.Checkpoint(model=model).write("model/ckpt", options=checkpoint_options())
    tf.saved_model.save(model, "model/saved_model", options=saved_model_options())

Outside a tfyarn TensorFlow job (no chief in TF_CONFIG) the options are
TensorFlow's defaults. TensorFlow is imported only when the options are built.

``finish`` ends a ParameterServerStrategy chief without TensorFlow's
coordinator teardown, which hangs for good once a worker was lost (see there).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, NoReturn

CHIEF_CPU = "/job:chief/replica:0/task:0/device:CPU:0"


def io_device(tf_config: str | None = None) -> str | None:
    """The device that should do checkpoint I/O: the chief's CPU when the cluster has a chief and ps tasks."""
    text = os.environ.get("TF_CONFIG", "") if tf_config is None else tf_config
    try:
        cluster = json.loads(text).get("cluster") or {} if text else {}
    except (ValueError, AttributeError):
        return None
    return CHIEF_CPU if cluster.get("chief") and cluster.get("ps") else None


def local_path(path: str) -> str:
    """``path`` made absolute on the chief; refuses a URI TensorFlow cannot write."""
    if "://" in path and not path.startswith("file://"):
        raise ValueError(
            f"{path}: TensorFlow cannot write this URI scheme (TF 2.16+ has no hdfs://); write to a local dir "
            "and publish it with tfyarn submit --output DIR:hdfs://..."
        )
    return os.path.abspath(path.removeprefix("file://"))


def checkpoint_options() -> Any:
    """``tf.train.CheckpointOptions`` with the chief's CPU doing the I/O in a ParameterServerStrategy job."""
    import tensorflow as tf

    device = io_device()
    return tf.train.CheckpointOptions(experimental_io_device=device) if device else tf.train.CheckpointOptions()


def saved_model_options() -> Any:
    """``tf.saved_model.SaveOptions`` with the chief's CPU doing the I/O in a ParameterServerStrategy job."""
    import tensorflow as tf

    device = io_device()
    return tf.saved_model.SaveOptions(experimental_io_device=device) if device else tf.saved_model.SaveOptions()


def finish(code: int = 0) -> NoReturn:
    """End the process now with ``code``, after flushing stdout and stderr.

    Why: once a ParameterServerStrategy worker is lost, TensorFlow's
    ``ClusterCoordinator`` recovery thread retries the worker's old address
    forever while holding a lock, and the coordinator's destructor at
    interpreter exit waits for that lock: the chief never exits, so the job
    never ends. A worker that tfyarn restarts on another node serves at a new
    address, which TF's fixed cluster spec cannot take in. Call this last in a
    chief that trains with worker restarts; close your own writers first, as
    exit handlers do not run.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
