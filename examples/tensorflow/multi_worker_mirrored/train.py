"""TF2 MultiWorkerMirroredStrategy with Keras fit: the same script on every worker.

TF_CONFIG comes from tfyarn. Data: a synthetic classification problem from a
fixed seed; Keras shards it across workers. Worker 0 (the chief) saves the
model to --model-dir; the others save to a scratch dir, as MWMS requires.
Each worker prints one `TFYARN_RESULT {json}` line for the tests.
"""
import argparse
import json
import os
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps-per-epoch", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--model-dir", default="model")
    args = p.parse_args()

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    task = json.loads(os.environ["TF_CONFIG"])["task"]
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4096, 10)).astype("float32")
    y = (x[:, :3].sum(axis=1) > 0).astype("int64")
    global_batch = args.batch_size * strategy.num_replicas_in_sync
    ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(4096, seed=1).repeat().batch(global_batch)

    with strategy.scope():
        model = keras.Sequential([keras.layers.Dense(32, activation="relu", input_shape=(10,)),
                                  keras.layers.Dense(2)])
        model.compile(optimizer=keras.optimizers.SGD(0.1),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(ds, epochs=args.epochs, steps_per_epoch=args.steps_per_epoch, verbose=2)

    is_chief = task["type"] == "chief" or (task["type"] == "worker" and task["index"] == 0)
    target = args.model_dir if is_chief else tempfile.mkdtemp()
    model.save(os.path.join(target, "saved_model"), save_format="tf")
    result = {"task": task, "num_replicas_in_sync": strategy.num_replicas_in_sync,
              "losses": history.history["loss"], "accuracy": history.history["accuracy"],
              "weights_sum": float(sum(float(np.sum(w)) for w in model.get_weights())), "chief": is_chief}
    print("TFYARN_RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
