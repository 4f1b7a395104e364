"""`tfyarn nodes` on the real two-node cluster: each node's state and health from the RM, and a
running job's tasks under the nodes that hold them."""
from __future__ import annotations

import json
import time
import urllib.request
from typing import Any

from tests.integration.conftest import app_id_from, status_json, tfyarn, wait_for


def nodes_json() -> list[dict[str, Any]]:
    res = tfyarn("nodes", "--json", timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    return json.loads(res.stdout)


def rm_answer() -> dict[str, dict[str, Any]]:
    """node id -> the RM's own record, read directly, to check what the command says against."""
    with urllib.request.urlopen("http://127.0.0.1:8088/ws/v1/cluster/nodes", timeout=10) as r:
        return {n["id"]: n for n in (json.load(r)["nodes"] or {}).get("node") or []}


def _both_running() -> list[dict[str, Any]] | None:
    running = [n for n in nodes_json() if n["state"] == "RUNNING"]
    return running if {n["host"] for n in running} == {"localhost", "127.0.0.2"} else None


def _tasks_of(app: str, nodes: list[dict[str, Any]]) -> dict[str, list[str]]:
    return {n["host"]: [t["task"] for t in n["tasks"] if t["app_id"] == app] for n in nodes}


def test_nodes_lists_both_nodes_healthy_with_the_spread_jobs_task_on_each(cluster, yarn_apps):
    wait_for("the RM to list both nodes RUNNING", _both_running, timeout_s=240, every_s=5)
    res = tfyarn("submit", "--framework", "pytorch", "--num-workers", "2", "--worker-memory", "512m",
                 "--placement", "spread", "--name", "it-nodes", "--",
                 "python", "-c", "import time; time.sleep(600)")
    assert res.returncode == 0, res.stdout + res.stderr
    app = app_id_from(res.stdout)
    yarn_apps.append(app)

    def spread() -> list[dict[str, Any]] | None:
        nodes = nodes_json()
        on = _tasks_of(app, nodes)
        return nodes if len(on.get("localhost", [])) == 1 and len(on.get("127.0.0.2", [])) == 1 else None

    nodes = wait_for("a worker of the job under each node in `tfyarn nodes --json`", spread, timeout_s=400,
                     every_s=5)
    rm = rm_answer()
    tasks = {t["name"]: t["host"] for t in status_json(app)["tasks"]}
    assert sorted(tasks) == ["worker:0", "worker:1"] and sorted(tasks.values()) == ["127.0.0.2", "localhost"]
    now_ms = time.time() * 1000
    for n in (n for n in nodes if n["host"] in ("localhost", "127.0.0.2")):
        assert n["state"] == "RUNNING" and n["health_report"] == "", n
        assert n["node_id"] == f"{n['host']}:8041" and n["node_id"] in rm
        assert 0 < n["last_health_update_ms"] <= rm[n["node_id"]]["lastHealthUpdate"]  # read a moment before
        assert 0 < now_ms - n["last_health_update_ms"] < 15 * 60 * 1000, n  # heard from recently
        assert n["memory_mb"] == rm[n["node_id"]]["totalResource"]["memory"]
        assert n["memory_used_mb"] >= 512 and n["vcores_used"] >= 1 and n["containers"] >= 1, n
        mine = [t for t in n["tasks"] if t["app_id"] == app]
        assert [(t["job_name"], t["gpus"]) for t in mine] == [("it-nodes", [])]
        assert tasks[mine[0]["task"]] == n["host"]  # where `tfyarn status` says it runs

    text = tfyarn("nodes", timeout=120)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    for host in ("localhost", "127.0.0.2"):
        row = next(i for i, line in enumerate(lines) if line.split()[:2] == [host, "RUNNING"])
        assert "healthy (reported " in lines[row] and "!!" not in lines[row]
        under = []
        for line in lines[row + 1:]:
            if not line.startswith("  "):
                break
            under.append(line.split())
        assert [u[:2] for u in under if u[0] == app] == [[app, "it-nodes"]], lines

    killed = tfyarn("kill", app)
    assert killed.returncode == 0, killed.stderr
    wait_for("the killed job's tasks to leave `tfyarn nodes`",
             lambda: not any(_tasks_of(app, nodes_json()).values()), timeout_s=120, every_s=3)
