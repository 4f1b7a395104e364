"""GPUs and several processes per container on two nodes (issue 13): per-node device pools, the
fragmentation gang timeout, and `--nproc-per-node 2` with its ranks across nodes.

Each node advertises 4 stand-in GPUs. There is no real device: what is checked is what tfyarn
binds and tells each process (CUDA_VISIBLE_DEVICES), and what YARN counts.
"""
from __future__ import annotations

import pytest

import json
import re
import time
import urllib.request
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tests.integration.conftest import app_id_from, status_json, tfyarn, wait_for
from tests.integration.nodes import NODE2, ip, running_nodes, two_nodes  # noqa: F401

NODES = {"127.0.0.1", NODE2}

# Needs the cluster to itself (tests/integration/conftest.py, Makefile's two phases): every GPU free; asserts each node's free GPUs.
pytestmark = pytest.mark.exclusive


def _submit(*args: str, timeout: float = 420) -> tuple[str, Any]:
    res = tfyarn("submit", *args, timeout=timeout)
    return app_id_from(res.stdout + res.stderr), res


def _lines(app: str, task: str, prefix: str, count: int, seen: list[str]) -> list[str] | None:
    """The ``count`` lines of task's output that start with ``prefix``, once all are there.

    Each miss is recorded in ``seen`` (exit code, stderr, the output's tail), so a timeout says why.
    """
    t0 = time.monotonic()
    res = tfyarn("logs", app, "--task", task)
    # A whole line of key=value words (not the executor's echo of a `-c` command). Two processes'
    # lines glued into one count once, so the test fails: the executor's stdio hook prevents that.
    probe = re.compile(re.escape(prefix) + r"\S+=\S*(?: \S+=\S*)*$")
    found = [m.group(0) for m in map(probe.match, res.stdout.splitlines()) if m]
    if len(found) >= count:
        return found
    seen.append(f"after {time.monotonic() - t0:.1f} s: rc={res.returncode} stderr={res.stderr.strip()[-400:]!r} "
                f"stdout tail={res.stdout[-600:]!r}")
    return None


def _task_lines(app: str, tasks: list[dict[str, Any]], prefix: str, count: int) -> dict[str, list[str]]:
    """Each task's ``prefix`` lines (fetched side by side: one `tfyarn logs` takes seconds here)."""
    def one(name: str) -> list[str]:
        seen: list[str] = []
        try:
            return wait_for(f"{count} {prefix!r} line(s) in {name}'s log",
                            lambda: _lines(app, name, prefix, count, seen), timeout_s=120, every_s=2)
        except AssertionError as e:
            asked = f"`tfyarn logs {app} --task {name}` answered ({len(seen)} tries, the last 3)"
            raise AssertionError(f"{e}\n{asked}:\n" + "\n".join(seen[-3:])) from None

    with ThreadPoolExecutor(len(tasks)) as pool:
        return dict(zip([t["name"] for t in tasks], pool.map(one, [t["name"] for t in tasks]), strict=True))


def _fields(line: str) -> dict[str, str]:
    return dict(word.split("=", 1) for word in line.split()[1:])


# -- 1. GPUs disjoint within a node, independent across nodes -----------------------------------------

GPU_PROBE = "import os; print('GPUPROBE cvd=' + os.environ['CUDA_VISIBLE_DEVICES'] + ' node=' + os.environ['NM_HOST'])"


def test_four_two_gpu_workers_get_disjoint_devices_per_node_and_the_same_numbers_on_each_node(two_nodes, yarn_apps):
    """4 workers x 2 GPUs = all 8 GPUs of the two 4-GPU nodes, so YARN must put two containers on each.

    On this cluster YARN counts GPUs but binds none (DefaultContainerExecutor), so the AM binds them
    from its per-node pools (gpu_binding "tfyarn"): on each node the two containers split 0-3 between
    them, and each node's pool is its own, so both nodes hand out the same numbers.
    """
    app, res = _submit("--num-workers", "4", "--worker-gpus", "2", "--worker-memory", "512m",
                       "--name", "it-gpus-per-node", "--wait", "--", "python", "-c", GPU_PROBE)
    yarn_apps.append(app)
    assert res.returncode == 0, res.stdout + res.stderr
    doc = status_json(app)
    assert doc["state"] == "SUCCEEDED", doc["diagnostics"]
    tasks = doc["tasks"]
    assert len(tasks) == 4
    per_node: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in tasks:
        assert t["gpus_asked"] == 2 and len(t["gpus"]) == 2, t
        assert t["gpu_binding"] == "tfyarn", t  # the AM's own pool, not YARN's (none here) or Docker's
        per_node[ip(t["host"])].append(t)
    assert set(per_node) == NODES and [len(ts) for ts in per_node.values()] == [2, 2], per_node
    for node, (a, b) in per_node.items():
        assert not set(a["gpus"]) & set(b["gpus"]), f"{node}: {a['name']} {a['gpus']} and {b['name']} {b['gpus']} share"
        assert sorted(a["gpus"] + b["gpus"]) == [0, 1, 2, 3], (node, a["gpus"], b["gpus"])
    # Independent pools: the same device numbers are handed out on both nodes (a single cluster-wide
    # pool could not give 8 devices out of 0-3 without a repeat, so the check above already needs it).
    node1, node2 = ({d for t in per_node[n] for d in t["gpus"]} for n in sorted(NODES))
    assert node1 == node2 == {0, 1, 2, 3}
    # What each process saw is what the status says it holds, on the node the status says.
    seen = _task_lines(app, tasks, "GPUPROBE ", 1)
    for t in tasks:
        got = _fields(seen[t["name"]][0])
        assert got["cvd"] == ",".join(str(d) for d in t["gpus"]), (t["name"], got, t["gpus"])
        assert got["node"] == t["host"], (t["name"], got, t["host"])


# -- 2. The fragmentation gang timeout ------------------------------------------------------------------

PER_NODE = re.compile(r"^(\S+) (\d+) MiB, (\d+) vcore\(s\), (\d+) GPU\(s\)$")


def _gang_timeout(*args: str) -> tuple[str, dict[str, Any]]:
    """Submit a gang that cannot be placed, with a 20 s allocation timeout; its final status."""
    app, res = _submit(*args, "--allocation-timeout", "20", "--wait", "--", "python", "-c", "print('ran')")
    assert res.returncode == 4, res.stdout + res.stderr  # 4: the job FAILED
    doc = status_json(app)
    assert doc["state"] == "FAILED", doc
    return app, doc


def _per_node(diagnostics: str) -> dict[str, tuple[int, int, int]]:
    """address -> (free MiB, free vcores, free GPUs), from the message's "(per node: ...)" part."""
    m = re.search(r"\(per node: (.*?GPU\(s\))\)", diagnostics)
    assert m, diagnostics
    nodes = {}
    for part in m.group(1).split("; "):
        node = PER_NODE.match(part)
        assert node, (part, diagnostics)
        nodes[ip(node.group(1).rpartition(":")[0])] = tuple(int(node.group(i)) for i in (2, 3, 4))
    assert set(nodes) == NODES, diagnostics  # both nodes named
    return nodes


def _gpus_in_use() -> dict[str, int]:
    """address -> GPUs YARN counts as used, for the running nodes."""
    def used(node: dict[str, Any]) -> int:
        infos = node["usedResource"]["resourceInformations"]["resourceInformation"]
        return int({i["name"]: i["value"] for i in infos}["yarn.io/gpu"])

    return {addr: used(n) for addr, n in running_nodes().items()}


def _gpus_of_other_apps(app: str) -> int:
    """GPUs the RM counts as held by other running applications (other engineers' jobs may run)."""
    with urllib.request.urlopen("http://127.0.0.1:8088/ws/v1/cluster/apps?states=RUNNING", timeout=5) as r:
        apps = (json.load(r)["apps"] or {}).get("app") or []
    total = 0
    for a in apps:
        if a["id"] == app:
            continue
        for part in (a.get("resourceInfo") or {}).get("resourceUsagesByPartition") or []:
            infos = part["used"]["resourceInformations"]["resourceInformation"]
            total += int({i["name"]: i["value"] for i in infos}.get("yarn.io/gpu", 0))
    return total


def _assert_released(app: str) -> None:
    """The job's containers are all released: YARN counts no GPU in use on either node (none but
    those other applications hold, should another engineer's job run now)."""
    def released() -> dict[str, int] | None:
        used = _gpus_in_use()
        return used if set(used) == NODES and sum(used.values()) == _gpus_of_other_apps(app) else None

    wait_for("the failed gang's containers to be released", released, timeout_s=60, every_s=2)


def test_three_three_gpu_workers_time_out_naming_each_nodes_free_gpus(two_nodes, yarn_apps):
    """3 workers x 3 GPUs: each 4-GPU node holds one such container, so two are allocated (one per
    node) and the third never is; after the 20 s allocation timeout the job FAILS, its diagnostics
    say what each node has free (1 GPU each, next to the job's own 3) and why the last worker fits on
    none (9 GPUs asked, 8 in the cluster: too little free), and everything it held is released.

    Admission control does not stand in the way: it refuses only a container larger than every
    node (tfyarn/admission.py check_fits), and a 3-GPU container fits a 4-GPU node; the total the
    gang asks is YARN's to place, so the submit goes through and the AM's gang timeout decides.
    """
    app, doc = _gang_timeout("--num-workers", "3", "--worker-gpus", "3", "--worker-memory", "512m",
                             "--name", "it-gang-3x3")
    yarn_apps.append(app)
    diag = doc["diagnostics"]
    assert "1 of 3 worker container(s) not allocated after 20 s (each asks 512 MiB, 1 vcore(s), 3 GPU(s))" in diag
    nodes = _per_node(diag)
    assert {addr: free[2] for addr, free in nodes.items()} == {"127.0.0.1": 1, NODE2: 1}, diag  # 4 less its 3
    assert "2 of 8 GPU(s) free" in diag, diag
    assert ("worker needs 1 x (512 MiB, 1 vcore(s), 3 GPU(s)) on single nodes and 0 fit: "
            "the cluster has too little free") in diag, diag
    placed = [t for t in doc["tasks"] if t["host"]]
    assert sorted(ip(t["host"]) for t in placed) == sorted(NODES), doc["tasks"]  # one per node
    _assert_released(app)


def test_a_gang_that_fits_in_total_but_not_on_single_nodes_times_out_saying_containers_cannot_span_nodes(
        two_nodes, yarn_apps):
    """Pure fragmentation: a chief x 2 GPUs and 2 workers x 3 GPUs ask 8 GPUs, exactly the cluster's
    8, yet no placement exists (a node holding a 3-GPU worker has 1 left; one holding the chief, 2).
    Whichever two containers YARN places, the one left over fits on no single node although
    enough GPUs are free in total, and the message says so.
    """
    app, doc = _gang_timeout("--framework", "tensorflow", "--chief", "--chief-gpus", "2",
                             "--chief-memory", "512m", "--num-workers", "2", "--worker-gpus", "3",
                             "--worker-memory", "512m", "--name", "it-gang-fragmented")
    yarn_apps.append(app)
    diag = doc["diagnostics"]
    nodes = _per_node(diag)
    free = {addr: gpus for addr, (_, _, gpus) in nodes.items()}
    assert re.search(rf"and {sum(free.values())} of 8 GPU\(s\) free", diag), diag
    m = re.search(r"; (chief|worker) needs 1 x \(512 MiB, 1 vcore\(s\), (\d) GPU\(s\)\) on single nodes and 0 fit: "
                  r"enough is free in total, but a container cannot span nodes", diag)
    assert m, diag
    need = int(m.group(2))
    assert need == {"chief": 2, "worker": 3}[m.group(1)], diag
    assert all(g < need for g in free.values()) and sum(free.values()) >= need, (free, need)  # fragmentation
    assert len([t for t in doc["tasks"] if t["host"]]) == 2, doc["tasks"]
    _assert_released(app)


# -- 3. --nproc-per-node 2 on two nodes -----------------------------------------------------------------

DDP_PROBE = """\
import os

import torch
import torch.distributed as dist

dist.init_process_group(backend="gloo", init_method="env://")
t = torch.tensor([dist.get_rank()])
dist.all_reduce(t)
print(f"DDPPROBE rank={os.environ['RANK']} local={os.environ['LOCAL_RANK']} world={os.environ['WORLD_SIZE']} "
      f"node={os.environ['NM_HOST']} cvd={os.environ.get('CUDA_VISIBLE_DEVICES', '')} "
      f"pg_rank={dist.get_rank()} sum={int(t.item())}", flush=True)
dist.destroy_process_group()
"""


def test_two_processes_per_container_on_two_nodes_rank_by_container_and_all_reduce(two_nodes, yarn_apps, tmp_path):
    """`--nproc-per-node 2` for real: 2 containers (3 GPUs each force one per node) x 2 processes
    launched by torch.distributed.run, each process a rank of one gloo group of 4 (no real GPU here).

    Ranks follow the container index (worker:0 holds ranks 0 and 1, worker:1 ranks 2 and 3), so each
    node holds one rank group; an all_reduce of the ranks gives 0+1+2+3 = 6 everywhere.
    """
    script = tmp_path / "ddp_probe.py"
    script.write_text(DDP_PROBE)
    app, res = _submit("--framework", "pytorch", "--num-workers", "2", "--worker-gpus", "3",
                       "--nproc-per-node", "2", "--worker-memory", "512m", "--name", "it-nproc-2",
                       "--file", str(script), "--wait", "--", "python", "ddp_probe.py")
    yarn_apps.append(app)
    assert res.returncode == 0, res.stdout + res.stderr
    doc = status_json(app)
    assert doc["state"] == "SUCCEEDED", doc["diagnostics"]
    tasks = sorted(doc["tasks"], key=lambda t: t["index"])
    assert [t["name"] for t in tasks] == ["worker:0", "worker:1"]
    assert {ip(t["host"]) for t in tasks} == NODES, tasks  # one container per node
    lines = _task_lines(app, tasks, "DDPPROBE ", 2)
    ranks_by_task = {}
    for t in tasks:
        procs = [_fields(line) for line in lines[t["name"]]]
        assert len(procs) == 2, lines[t["name"]]
        for p in procs:
            assert p["world"] == "4" and p["sum"] == "6", p
            assert p["pg_rank"] == p["rank"], p
            assert p["node"] == t["host"], (t["name"], t["host"], p)
            assert p["cvd"] == ",".join(str(d) for d in t["gpus"]) and len(t["gpus"]) == 3, (p, t["gpus"])
        assert sorted(p["local"] for p in procs) == ["0", "1"], procs
        ranks_by_task[t["name"]] = sorted(int(p["rank"]) for p in procs)
    assert ranks_by_task == {"worker:0": [0, 1], "worker:1": [2, 3]}, (
        f"ranks do not follow the container index: {ranks_by_task} (hosts "
        f"{ {t['name']: t['host'] for t in tasks} })")
