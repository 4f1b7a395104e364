"""Write a small synthetic regression data set as .npy files, for staging through HDFS.

    python examples/make_data.py --features 8 --out /tmp/data
    hdfs dfs -put /tmp/data /data/regression8
    tfyarn submit ... --input hdfs:///data/regression8 ...   # $TFYARN_INPUT in the container
"""
import argparse
import os

import numpy as np


def make(features: int, samples: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(samples, features)).astype("float32")
    w = rng.normal(size=(features, 1)).astype("float32")
    y = x @ w + 0.5 + 0.05 * rng.normal(size=(samples, 1)).astype("float32")
    return x, y


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--features", type=int, default=8)
    p.add_argument("--samples", type=int, default=4096)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    x, y = make(args.features, args.samples)
    np.save(os.path.join(args.out, "x.npy"), x)
    np.save(os.path.join(args.out, "y.npy"), y)
    print(f"wrote {args.samples} samples with {args.features} features to {args.out}")


if __name__ == "__main__":
    main()
