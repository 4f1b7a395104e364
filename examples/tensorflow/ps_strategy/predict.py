"""Load the model train.py saved (fetched with `tfyarn fetch`) and score it on a data set.

    tfyarn fetch hdfs:///models/tour /tmp/tour-model
    python examples/tensorflow/ps_strategy/predict.py /tmp/tour-model /tmp/tour-data

Prints the mean squared error of the SavedModel on x.npy/y.npy (examples/make_data.py writes them),
next to that of always predicting the mean: a trained model is far below it.
"""
import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tf_keras as keras  # noqa: E402  (the Keras train.py saved with)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model_dir", help="what --output published: it holds saved_model/")
    p.add_argument("data_dir", help="x.npy and y.npy")
    args = p.parse_args()
    model = keras.models.load_model(os.path.join(args.model_dir, "saved_model"), compile=False)
    x, y = np.load(os.path.join(args.data_dir, "x.npy")), np.load(os.path.join(args.data_dir, "y.npy"))
    mse = float(np.mean((model.predict(x, verbose=0) - y) ** 2))
    baseline = float(np.mean((y - y.mean()) ** 2))
    print(f"model {args.model_dir}: MSE {mse:.4f} on {len(x)} samples (predicting the mean: {baseline:.4f})")


if __name__ == "__main__":
    main()
