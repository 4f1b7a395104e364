"""PyTorch DistributedDataParallel, written for torchrun: it runs unchanged under tfyarn.

tfyarn sets MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK (as
torchrun would). gloo on CPU, nccl when GPUs are present. Each rank trains
on its own shard (DistributedSampler) of a synthetic regression set, or of
--data-dir (x.npy, y.npy; default $TFYARN_INPUT, staged by `--input`); rank 0
saves the model to --model-dir. Each rank prints one `TFYARN_RESULT {json}`.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


try:  # tfyarn's status page shows when the first step ended and the loss; no-ops elsewhere
    from tfyarn.report import first_step, metric
except ImportError:
    def first_step() -> None:
        pass

    def metric(name: str, value: float, step: int | None = None) -> None:
        pass

def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--samples", type=int, default=1024)
    p.add_argument("--model-dir", default="model")
    p.add_argument("--data-dir", default=os.environ.get("TFYARN_INPUT"))
    args = p.parse_args()

    use_cuda = torch.cuda.is_available()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if use_cuda:
        torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl" if use_cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")
    torch.set_num_threads(1)

    g = torch.Generator().manual_seed(0)
    if args.data_dir:
        import numpy as np

        x = torch.from_numpy(np.load(os.path.join(args.data_dir, "x.npy")))
        y = torch.from_numpy(np.load(os.path.join(args.data_dir, "y.npy")))
        args.samples = x.shape[0]
    else:
        x = torch.randn(args.samples, 16, generator=g)
        y = x @ torch.randn(16, 1, generator=g) + 0.1 * torch.randn(args.samples, 1, generator=g)
    dataset = TensorDataset(torch.arange(args.samples), x, y)
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=0)
    loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)

    torch.manual_seed(rank)  # different starting weights per rank: DDP must broadcast rank 0's
    model = DDP(torch.nn.Sequential(torch.nn.Linear(x.shape[1], 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).to(device),
                device_ids=[local_rank] if use_cuda else None)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    seen: set[int] = set()
    losses = []
    t0 = time.time()
    steps = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        total = 0.0
        for idx, xb, yb in loader:
            if epoch == 0:
                seen.update(idx.tolist())  # this rank's shard (it moves with each epoch's shuffle)
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(xb.to(device)), yb.to(device))
            loss.backward()
            opt.step()
            total += loss.item()
            steps += 1
            if steps == 1:
                first_step()
        losses.append(total / len(loader))
        metric("loss", losses[-1], step=epoch)  # each rank's own; also --progress-timeout's heartbeat
        if rank == 0:
            print(f"epoch {epoch}: loss {losses[-1]:.4f}", flush=True)
    elapsed = time.time() - t0
    if rank == 0:
        os.makedirs(args.model_dir, exist_ok=True)
        torch.save(model.module.state_dict(), os.path.join(args.model_dir, "model.pt"))
    params = [float(v) for prm in model.module.parameters() for v in prm.detach().cpu().flatten()[:8]]
    result = {"rank": rank, "world_size": world, "torch": torch.__version__, "env_world_size": os.environ.get("WORLD_SIZE"),
              "device": str(device), "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
              "master": f"{os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}",
              "backend": dist.get_backend(), "data": args.data_dir or "generated", "samples": args.samples, "shard_epoch0": sorted(seen), "losses": losses,
              "params_head": params, "steps": steps, "steps_per_second": steps / elapsed}
    print("TFYARN_RESULT " + json.dumps(result), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
