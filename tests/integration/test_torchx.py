"""torchx's dist.ddp on the real cluster through tfyarn's `yarn` scheduler: run, status, logs."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.integration.conftest import tfyarn

TORCHX = str(Path(sys.executable).parent / "torchx")
TRAIN = """\
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
t = torch.tensor([dist.get_rank() + 1.0])
dist.all_reduce(t)
print(f"RANK {dist.get_rank()} OF {dist.get_world_size()} SUM {t.item()}", flush=True)
dist.destroy_process_group()
"""


def test_torchx_run_dist_ddp_on_yarn(cluster, tmp_path, yarn_apps):
    (tmp_path / "train.py").write_text(TRAIN)
    run = subprocess.run([TORCHX, "run", "-s", "yarn", "--wait", "dist.ddp", "-j", "2x1", "--memMB", "768",
                          "--cpu", "1", "--script", "train.py"], capture_output=True, text=True, timeout=600,
                         cwd=str(tmp_path))
    handle = re.search(r"yarn://[^/\s]*/(application_\d+_\d+)", run.stdout + run.stderr)
    assert handle, run.stdout + run.stderr
    app = handle.group(1)
    yarn_apps.append(app)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "SUCCEEDED" in run.stdout + run.stderr, run.stdout + run.stderr

    status = subprocess.run([TORCHX, "status", handle.group(0)], capture_output=True, text=True, timeout=120)
    assert status.returncode == 0 and "SUCCEEDED" in status.stdout, status.stdout + status.stderr
    doc = json.loads(tfyarn("status", "--json", app).stdout)
    assert doc["state"] == "SUCCEEDED" and doc["framework"] == "pytorch" and "torchx" in doc["tags"]
    assert len(doc["tasks"]) == 2
    said = ""
    for k in (0, 1):  # c10d gives ranks in the order the nodes arrive: either replica may be rank 0
        log = subprocess.run([TORCHX, "log", f"{handle.group(0)}/train/{k}"], capture_output=True, text=True,
                             timeout=180)
        assert log.returncode == 0, log.stderr
        assert re.search(r"RANK [01] OF 2 SUM 3\.0", log.stdout), log.stdout + log.stderr
        said += log.stdout
    assert "RANK 0 OF 2 SUM 3.0" in said and "RANK 1 OF 2 SUM 3.0" in said
