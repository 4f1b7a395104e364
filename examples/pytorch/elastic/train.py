"""Elastic PyTorch DDP, written the way torchrun's elastic agent expects: checkpoint, and resume on every round.

Under `tfyarn submit --num-workers MIN:MAX`, torchrun re-forms the group
whenever a container joins or is lost, and starts this script again in every
container, with new RANK and WORLD_SIZE. So the script:
- keeps a checkpoint in its container's working dir after every step;
- at each start, agrees with its peers on the most advanced checkpoint (an
  all_reduce of steps) and takes it from its holder (a broadcast), so a new
  container and the survivors go on from the same step, never from zero;
- records each round (world size, first step) in the checkpoint, so the
  result shows how the group grew and shrank.
gloo on CPU, nccl when GPUs are present. Every rank saves the final model
(identical after DDP) to --model-dir, whichever container publishes it.
Each rank prints one `TFYARN_RESULT {json}`.
"""
import argparse
import io
import json
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

try:  # tfyarn's status page shows the loss; no-ops elsewhere
    from tfyarn.report import first_step, progress
except ImportError:
    def first_step() -> None:
        pass

    def progress(step=None, **metrics) -> None:
        pass

CHECKPOINT = "elastic-checkpoint.pt"


def new_state() -> dict:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    return {"step": 0, "model": model.state_dict(), "optimizer": None, "rounds": []}


def load_local() -> dict:
    """This container's last checkpoint (survivors of a re-formed group have one), else a fresh state."""
    if os.path.exists(CHECKPOINT):
        return torch.load(CHECKPOINT, weights_only=False)
    return new_state()


def save_local(state: dict) -> None:
    torch.save(state, CHECKPOINT + ".part")
    os.replace(CHECKPOINT + ".part", CHECKPOINT)  # a kill mid-write leaves the previous checkpoint whole


def agree(state: dict, rank: int) -> dict:
    """Every rank takes the most advanced checkpoint in the group (at equal steps, the one with the
    longest history of rounds: a newcomer's fresh state never replaces a survivor's), from the lowest
    rank holding it."""
    mine = state["step"] * 1_000_000 + len(state["rounds"])
    best = torch.tensor([mine], dtype=torch.long)
    dist.all_reduce(best, op=dist.ReduceOp.MAX)
    holder = torch.tensor([rank if mine == best.item() else dist.get_world_size()], dtype=torch.long)
    dist.all_reduce(holder, op=dist.ReduceOp.MIN)
    box = [None]
    if rank == holder.item():
        buf = io.BytesIO()
        torch.save(state, buf)
        box = [buf.getvalue()]
    dist.broadcast_object_list(box, src=int(holder.item()))
    return torch.load(io.BytesIO(box[0]), weights_only=False)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--step-seconds", type=float, default=0.0, help="pace each step (to watch the group change)")
    p.add_argument("--model-dir", default="model")
    args = p.parse_args()

    use_cuda = torch.cuda.is_available()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if use_cuda:
        torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl" if use_cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")
    torch.set_num_threads(1)

    state = agree(load_local(), rank)
    state["rounds"].append([world, state["step"]])
    save_local(state)  # the round is on record even if the group re-forms before its first step
    print(f"rank {rank}: world size {world}, resuming at step {state['step']} "
          f"(agent restart {os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')})", flush=True)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    model.load_state_dict(state["model"])
    ddp = DDP(model.to(device), device_ids=[local_rank] if use_cuda else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    if state["optimizer"]:
        opt.load_state_dict(state["optimizer"])

    g = torch.Generator().manual_seed(0)
    w_true = torch.randn(16, 1, generator=g)
    loss = torch.tensor(0.0)
    started = state["step"]
    while state["step"] < args.steps:
        step = state["step"]
        gen = torch.Generator().manual_seed(step * 1000 + rank)  # each rank its own batch of each step
        xb = torch.randn(32, 16, generator=gen)
        yb = xb @ w_true
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(xb.to(device)), yb.to(device))
        loss.backward()
        opt.step()
        state.update(step=step + 1, model=ddp.module.state_dict(), optimizer=opt.state_dict())
        save_local(state)
        if state["step"] == started + 1:
            first_step()
        progress(state["step"], loss=loss.item())
        if args.step_seconds:
            time.sleep(args.step_seconds)

    os.makedirs(args.model_dir, exist_ok=True)
    torch.save({"model": ddp.module.state_dict(), "step": state["step"], "rounds": state["rounds"]},
               os.path.join(args.model_dir, "model.pt"))
    result = {"rank": rank, "world_size": world, "steps": state["step"], "started_at_step": started,
              "rounds": state["rounds"], "loss": loss.item(), "torch": torch.__version__,
              "restart_count": int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))}
    print("TFYARN_RESULT " + json.dumps(result), flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
