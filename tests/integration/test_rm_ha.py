"""ResourceManager HA for real: the active RM is killed while `tfyarn submit --wait` follows a job.

The HA YARN (rm_ha.py) is its own: two RMs with ZooKeeper and one
NodeManager, sharing the suite's HDFS. The client is given only the HA
config (rm-ids, per-id addresses); it must find the active RM, and after
SIGKILL of that RM, follow the job through the failover to SUCCEEDED;
`status` and `list` must work against the new active RM.
"""
from __future__ import annotations

import json
import os
import subprocess
import textwrap
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import TFYARN, wait_for
from tests.integration.rm_ha import PORTS, RM_HOSTS, HaYarn

pytestmark = pytest.mark.disruptive  # four more JVMs and a failover: runs late, with the node killers

TRAIN = """
import os, sys, time
import torch, torch.distributed as dist
marker = sys.argv[1]
dist.init_process_group("gloo")
steps = 0
deadline = time.time() + 400
while time.time() < deadline:
    flag = torch.tensor([1.0 if os.path.exists(marker) else 0.0])
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    steps += 1
    if flag.item():
        break
    time.sleep(0.5)
print("RANK", dist.get_rank(), "STEPS", steps, flush=True)
dist.destroy_process_group()
sys.exit(0 if os.path.exists(marker) else 3)
"""


def rm_info(rm_id: str) -> dict[str, Any] | None:
    try:
        url = f"http://{RM_HOSTS[rm_id]}:{PORTS.rm_http}/ws/v1/cluster/info"
        with urllib.request.urlopen(url, timeout=3) as r:
            return json.load(r)["clusterInfo"]
    except (OSError, ValueError, KeyError):
        return None


def active() -> str | None:
    return next((r for r in RM_HOSTS if (rm_info(r) or {}).get("haState") == "ACTIVE"), None)


def nm_running(rm_id: str) -> bool:
    try:
        url = f"http://{RM_HOSTS[rm_id]}:{PORTS.rm_http}/ws/v1/cluster/nodes"
        with urllib.request.urlopen(url, timeout=3) as r:
            nodes = (json.load(r)["nodes"] or {}).get("node") or []
    except (OSError, ValueError, KeyError):
        return False
    return any(n["state"] == "RUNNING" for n in nodes)


@pytest.fixture(scope="module")
def ha(cluster, tmp_path_factory) -> Iterator[HaYarn]:
    yarn = HaYarn(root=tmp_path_factory.mktemp("rm-ha"), jar_cache=cluster.layout.jar_cache,
                  hdfs_conf=cluster.layout.conf_dir, bin_dir=cluster.layout.bin_dir)
    try:
        yarn.start()
        first = wait_for("an active ResourceManager with its NodeManager", lambda: (a := active()) and nm_running(a)
                         and a, timeout_s=180)
        print(f"HA YARN up: {first} active")
        yield yarn
    except BaseException:
        print(yarn.log_tail("rm1"), yarn.log_tail("rm2"), yarn.log_tail("nm"), sep="\n")
        raise
    finally:
        yarn.stop()


def run(ha: HaYarn, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HADOOP_CONF_DIR": str(ha.client_conf)}
    return subprocess.run([*TFYARN, *args], capture_output=True, text=True, timeout=timeout, env=env)


def test_submit_wait_status_and_list_go_on_after_the_active_rm_is_killed(ha: HaYarn, tmp_path: Path):
    first = active()
    assert first, "no active RM"
    marker = tmp_path / "stop"
    (tmp_path / "train.py").write_text(textwrap.dedent(TRAIN))
    env = {**os.environ, "HADOOP_CONF_DIR": str(ha.client_conf)}
    follow = subprocess.Popen(
        [*TFYARN, "submit", "--wait", "--framework", "pytorch", "--num-workers", "2", "--worker-memory", "768m",
         "--python-env", "local", "--name", "it-rm-ha", "--file", str(tmp_path / "train.py"),
         "--", "python", "train.py", str(marker)],
        env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        app = wait_for("the job's application id", lambda: next(
            (a["app_id"] for a in json.loads(run(ha, "list", "--json").stdout or "[]") if a.get("name") == "it-rm-ha"),
            None), timeout_s=120, every_s=2)

        def running() -> bool:
            res = run(ha, "status", "--json", app)
            tasks = json.loads(res.stdout).get("tasks") or [] if res.returncode == 0 else []
            return len(tasks) == 2 and all(t["state"] == "RUNNING" for t in tasks)

        wait_for("both ranks running", running, timeout_s=180, every_s=2)
        ha.kill(first)
        other = next(r for r in RM_HOSTS if r != first)
        wait_for(f"{other} active with the NodeManager", lambda: active() == other and nm_running(other),
                 timeout_s=120)
        # The new active RM answers at once; it shows the recovered attempt ACCEPTED ("Attempt recovered
        # after RM restart") until the AM's next heartbeat reaches it, then RUNNING again.
        def state() -> str:
            status = run(ha, "status", "--json", app)
            assert status.returncode == 0, status.stdout + status.stderr
            return json.loads(status.stdout)["state"]

        wait_for("the job RUNNING under the new active RM", lambda: state() == "RUNNING", timeout_s=60, every_s=1)
        listed = run(ha, "list", "--json")
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert app in {a["app_id"] for a in json.loads(listed.stdout)}, listed.stdout
        marker.write_text("stop")
        out, _ = follow.communicate(timeout=240)
    finally:
        if follow.poll() is None:
            follow.kill()
            out = (follow.communicate()[0] or "")
            run(ha, "kill", app) if "app" in locals() else None
    print(out[-3000:])  # what the user saw through the failover (pytest -s)
    assert follow.returncode == 0, out[-4000:]
    assert "SUCCEEDED" in out, out[-4000:]
    assert "\nall 2 worker task(s) succeeded" in out, out[-4000:]  # the AM's own words, not glued to YARN's
    final = run(ha, "status", "--json", app)
    doc = json.loads(final.stdout)
    assert doc["state"] == "SUCCEEDED" and doc["attempt"] == 1, final.stdout  # the same attempt went on
