"""TF2 ParameterServerStrategy, driven by a ClusterCoordinator: the chief's training code.

Only the chief runs this script. tfyarn starts the parameter servers and
workers as standard TensorFlow servers and writes TF_CONFIG for every task,
so there is no ClusterSpec here. Data: a synthetic regression problem
generated from a fixed seed, or read from --data-dir (x.npy, y.npy; default
$TFYARN_INPUT, where tfyarn stages `--input hdfs:///...`), sharded per worker.

Writes a checkpoint and a SavedModel to --model-dir, and prints one
`TFYARN_RESULT {json}` line (losses, variable placement) for the tests.
"""
import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras as keras  # noqa: E402  (Keras 2: works with ParameterServerStrategy)

try:  # tfyarn's status page shows when the first step ended and the loss; no-ops elsewhere
    from tfyarn.report import first_step, metric
except ImportError:
    def first_step() -> None:
        pass

    def metric(name: str, value: float, step: int | None = None) -> None:
        pass

FEATURES = 8


def make_data(n: int = 4096, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, FEATURES)).astype("float32")
    w = rng.normal(size=(FEATURES, 1)).astype("float32")
    y = x @ w + 0.5 + 0.05 * rng.normal(size=(n, 1)).astype("float32")
    return x, y


def build_model() -> keras.Model:
    return keras.Sequential([keras.layers.Dense(16, activation="relu", input_shape=(FEATURES,)),
                             keras.layers.Dense(1)])


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--steps-per-epoch", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--model-dir", default="model")
    p.add_argument("--data-dir", default=os.environ.get("TFYARN_INPUT"))
    p.add_argument("--log-dir", default=os.environ.get("TFYARN_TENSORBOARD_DIR"),
                   help="TensorBoard summaries (default: $TFYARN_TENSORBOARD_DIR, set by --tensorboard)")
    args = p.parse_args()

    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    if args.data_dir:
        x, y = np.load(os.path.join(args.data_dir, "x.npy")), np.load(os.path.join(args.data_dir, "y.npy"))
    else:
        x, y = make_data()

    def dataset_fn(ctx: tf.distribute.InputContext) -> tf.data.Dataset:
        ds = tf.data.Dataset.from_tensor_slices((x, y))
        ds = ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)
        return ds.shuffle(1024, seed=ctx.input_pipeline_id).repeat().batch(args.batch_size)

    with strategy.scope():
        model = build_model()
        optimizer = keras.optimizers.SGD(learning_rate=0.05)

    @tf.function
    def per_worker_dataset_fn():  # type: ignore[no-untyped-def]
        return strategy.distribute_datasets_from_function(dataset_fn)

    iterator = iter(coordinator.create_per_worker_dataset(per_worker_dataset_fn))

    @tf.function
    def step_fn(it):  # type: ignore[no-untyped-def]
        def replica_fn(features, labels):  # type: ignore[no-untyped-def]
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(features, training=True) - labels))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        features, labels = next(it)
        return strategy.reduce("MEAN", strategy.run(replica_fn, args=(features, labels)), axis=None)

    losses = []
    t0 = time.time()
    coordinator.schedule(step_fn, args=(iterator,)).fetch()
    first_step()
    writer = tf.summary.create_file_writer(args.log_dir) if args.log_dir else None
    t_train = time.time()  # after the first step: steps/s of steady training (benchmarks/ps_throughput.py)
    for epoch in range(args.epochs):
        results = [coordinator.schedule(step_fn, args=(iterator,)) for _ in range(args.steps_per_epoch)]
        coordinator.join()
        losses.append(float(np.mean([r.fetch() for r in results])))
        print(f"epoch {epoch}: loss {losses[-1]:.4f}", flush=True)
        metric("loss", losses[-1], step=epoch)  # also the hang watchdog's heartbeat (--progress-timeout)
        if writer:
            with writer.as_default():
                tf.summary.scalar("loss", losses[-1], step=epoch)
            writer.flush()

    t_end = time.time()
    train_s = t_end - t_train

    # Under ParameterServerStrategy the ps tasks write a checkpoint of their own
    # variables, so it needs a path every task shares. Here the chief copies the
    # trained weights into a local model and saves that, on its own disk:
    # tfyarn's --output publishes it from there.
    os.makedirs(args.model_dir, exist_ok=True)
    local = build_model()
    local.set_weights(model.get_weights())
    ckpt = tf.train.Checkpoint(model=local).save(os.path.join(args.model_dir, "ckpt", "ckpt"))
    local.save(os.path.join(args.model_dir, "saved_model"), save_format="tf")
    result = {
        "losses": losses,
        "variable_devices": sorted({v.device for v in model.trainable_variables}),
        "num_workers": resolver.cluster_spec().num_tasks("worker"),
        "num_ps": resolver.cluster_spec().num_tasks("ps"),
        "checkpoint": ckpt,
        "data": args.data_dir or "generated",
        "samples": int(x.shape[0]),
        "seconds": time.time() - t0,
        "steps_per_second": args.epochs * args.steps_per_epoch / train_s if train_s > 0 else 0.0,
        "train_window": [t_train, t_end],  # wall clock: benchmarks read the platform's CPU inside it
    }
    print("TFYARN_RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
