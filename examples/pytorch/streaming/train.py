"""PyTorch DDP that streams its data from HDFS while it trains: no staging, no full copy on any node.

Each rank reads only its own Parquet shards (the sorted shard list, every WORLD_SIZE-th file from
its RANK; DataLoader workers split a rank's shards further), a row group at a time, through
`tfyarn.storage.filesystem` (the client tfyarn stages with: HADOOP_CONF_DIR and the container's
delegation tokens, so it works on a Kerberized cluster too). Ranks may hold different row counts:
DDP's join() lets a rank that runs out early shadow the others' all-reduces instead of hanging.
Rank 0 saves the model to --model-dir. Each rank prints one `TFYARN_RESULT {json}`.

    python make_shards.py --out hdfs:///data/shards
    NUM_WORKERS=2 ./submit.sh --data hdfs:///data/shards
"""
import argparse
import json
import os
import time

import pyarrow.fs as pafs
import pyarrow.parquet as pq
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from tfyarn.storage import filesystem

try:  # tfyarn's status page shows when the first step ended; a no-op elsewhere
    from tfyarn.report import first_step
except ImportError:
    def first_step() -> None:
        pass


class ParquetShards(IterableDataset):
    """Rows of this rank's shards of a dir of Parquet files, streamed one row group at a time."""

    def __init__(self, uri: str, rank: int, world: int, batch_rows: int = 256) -> None:
        self.uri, self.rank, self.world, self.batch_rows = uri, rank, world, batch_rows
        fs, root = filesystem(uri)
        infos = fs.get_file_info(pafs.FileSelector(root))
        files = sorted(i.path for i in infos if i.is_file and i.path.endswith(".parquet"))
        if len(files) < world:
            raise SystemExit(f"{uri} has {len(files)} Parquet shard(s) for {world} ranks; write at least one per rank")
        self.files = files[rank::world]

    def __iter__(self):
        info = get_worker_info()  # DataLoader workers split this rank's files again
        files = self.files if info is None else self.files[info.id::info.num_workers]
        fs, _ = filesystem(self.uri)  # per process: a DataLoader worker needs its own client
        for path in files:
            with fs.open_input_file(path) as f:
                for batch in pq.ParquetFile(f).iter_batches(batch_size=self.batch_rows):
                    ids = torch.from_numpy(batch.column("id").to_numpy().copy())
                    x = torch.from_numpy(batch.column("x").flatten().to_numpy().reshape(len(batch), -1).copy())
                    y = torch.from_numpy(batch.column("y").to_numpy().copy()).unsqueeze(1)
                    yield from zip(ids, x, y)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True, help="a dir of Parquet shards: hdfs:///data/shards (make_shards.py)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--loader-workers", type=int, default=0, help="DataLoader worker processes per rank")
    p.add_argument("--model-dir", default="model")
    args = p.parse_args()

    dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    data = ParquetShards(args.data, rank, world)
    loader = DataLoader(data, batch_size=args.batch_size, num_workers=args.loader_workers)

    features = next(iter(loader))[1].shape[1]
    model = DDP(torch.nn.Sequential(torch.nn.Linear(features, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    rows, id_sum = 0, 0  # what this rank read in epoch 0: together, the ranks read every row once
    losses = []
    steps, t0 = 0, time.time()
    for epoch in range(args.epochs):
        total, batches = 0.0, 0
        with model.join():  # uneven shards: a rank that ends early keeps the all-reduces going
            for ids, xb, yb in loader:
                if epoch == 0:
                    rows, id_sum = rows + len(ids), id_sum + int(ids.sum())
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(model(xb), yb)
                loss.backward()
                opt.step()
                total, batches, steps = total + loss.item(), batches + 1, steps + 1
                if steps == 1:
                    first_step()
        losses.append(total / max(batches, 1))
        print(f"rank {rank} epoch {epoch}: loss {losses[-1]:.4f} over {batches} batches", flush=True)
    if rank == 0:
        os.makedirs(args.model_dir, exist_ok=True)
        torch.save(model.module.state_dict(), os.path.join(args.model_dir, "model.pt"))
    result = {"rank": rank, "world_size": world, "data": args.data, "files": [os.path.basename(f) for f in data.files],
              "rows_epoch0": rows, "id_sum_epoch0": id_sum, "losses": losses, "steps": steps,
              "seconds": time.time() - t0}
    print("TFYARN_RESULT " + json.dumps(result), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
