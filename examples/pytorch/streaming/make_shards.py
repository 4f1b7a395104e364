"""Write a synthetic regression data set as Parquet shards, straight to HDFS (or a local dir).

    python examples/pytorch/streaming/make_shards.py --out hdfs:///data/shards --shards 8

Each shard holds `id`, `x` (a list of --features floats) and `y`; ids run 0..samples-1 over the
shards in order, so a reader can check that it saw every row once. Shards are written as
`part-NNNNN.parquet` under --out (replaced if it exists).
"""
import argparse

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from tfyarn.storage import filesystem


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="hdfs:///dir, viewfs://..., or a local dir")
    p.add_argument("--shards", type=int, default=8)
    p.add_argument("--samples", type=int, default=4000)
    p.add_argument("--features", type=int, default=8)
    p.add_argument("--row-group", type=int, default=100, help="rows per Parquet row group (the read unit)")
    args = p.parse_args()

    rng = np.random.default_rng(0)
    w = rng.normal(size=(args.features,)).astype("float32")
    x = rng.normal(size=(args.samples, args.features)).astype("float32")
    y = x @ w + 0.5 + 0.05 * rng.normal(size=args.samples).astype("float32")

    fs, root = filesystem(args.out)
    if fs.get_file_info(root).type != pafs.FileType.NotFound:
        fs.delete_dir(root)
    fs.create_dir(root, recursive=True)
    bounds = np.linspace(0, args.samples, args.shards + 1).astype(int)
    for i, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        table = pa.table({
            "id": pa.array(np.arange(lo, hi), pa.int64()),
            "x": pa.FixedSizeListArray.from_arrays(pa.array(x[lo:hi].ravel()), args.features),
            "y": pa.array(y[lo:hi]),
        })
        with fs.open_output_stream(f"{root}/part-{i:05d}.parquet") as out:
            pq.write_table(table, out, row_group_size=args.row_group)
    print(f"wrote {args.samples} rows in {args.shards} Parquet shards to {args.out}")


if __name__ == "__main__":
    main()
