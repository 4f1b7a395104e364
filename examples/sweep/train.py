"""A small real PyTorch regression whose learning rate and batch size a sweep chooses.

It reports its validation loss each epoch (tfyarn.report.metric): `tfyarn sweep` gives it to Optuna,
whose median pruner stops trials that do worse than the others did by the same epoch. It saves its
model to --model-dir (the sweep's template publishes it per trial). Run it alone too:
  python train.py --lr 0.05 --batch-size 32
"""
from __future__ import annotations

import argparse
import math
import os
import time

import torch

import tfyarn.report

p = argparse.ArgumentParser()
p.add_argument("--lr", type=float, required=True)
p.add_argument("--batch-size", type=int, default=32)
p.add_argument("--epochs", type=int, default=8)
p.add_argument("--epoch-seconds", type=float, default=1.5, help="at least this long per epoch (the pruner sees it)")
p.add_argument("--model-dir", default="model")
args = p.parse_args()

torch.manual_seed(0)
x = torch.randn(2048, 8)
y = x @ torch.arange(1.0, 9.0) + 0.1 * torch.randn(2048)
train_x, train_y, val_x, val_y = x[:1536], y[:1536], x[1536:], y[1536:]
model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=args.lr)
for epoch in range(args.epochs):
    started = time.monotonic()
    for i in range(0, len(train_x), args.batch_size):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(train_x[i : i + args.batch_size]).squeeze(1), train_y[i : i + args.batch_size])
        loss.backward()
        opt.step()
    with torch.no_grad():
        val = torch.nn.functional.mse_loss(model(val_x).squeeze(1), val_y).item()
    val = val if math.isfinite(val) else 1e9  # a diverged run is a bad trial, not a missing value
    tfyarn.report.metric("val_loss", min(val, 1e9), step=epoch)
    print(f"epoch {epoch}: val_loss {val:.6g}", flush=True)
    time.sleep(max(0.0, args.epoch_seconds - (time.monotonic() - started)))
os.makedirs(args.model_dir, exist_ok=True)
torch.save(model.state_dict(), os.path.join(args.model_dir, "model.pt"))
print(f"saved {args.model_dir}/model.pt (lr {args.lr}, batch size {args.batch_size})")
