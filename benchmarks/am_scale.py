"""am_scale: the ApplicationMaster's bookkeeping for a 1,000-task job, in-process.

Drives appmaster.am's real functions (adopt_initial, sync,
bind_gpus, the status document, the page, request_container) against an in-memory stand-in
for skein's ApplicationClient, so only tfyarn's own work is measured:
CPU time per phase, the status JSON's build time, and peak memory.
Targets (issue 7): registration of all tasks + cluster view < 1 s CPU;
status JSON < 100 ms; peak RSS < 300 MiB.

    python benchmarks/am_scale.py [--tasks 1000]
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

REPEATS = 5

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from appmaster.am import gpus, master, page  # noqa: E402
from appmaster.am.tasks import TaskTable  # noqa: E402
from tfyarn import nodegpus, protocol  # noqa: E402
from tfyarn.spec import JobSpec, RoleSpec  # noqa: E402


@dataclass
class FakeContainer:
    id: str
    state: str = "REQUESTED"
    yarn_container_id: str = ""
    yarn_node_http_address: str = ""
    exit_message: str = ""
    start_time: datetime | None = None


@dataclass
class FakeKV(dict):  # type: ignore[type-arg]
    def get_prefix(self, prefix: str) -> dict[str, bytes]:
        return {k: v for k, v in self.items() if k.startswith(prefix)}

    def discard(self, key: str) -> None:
        self.pop(key, None)


@dataclass
class FakeApp:
    """What the AM uses of skein.ApplicationClient, in memory."""

    id: str = "application_1_0001"
    kv: FakeKV = field(default_factory=FakeKV)
    containers: dict[str, FakeContainer] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)

    def add_container(self, service: str, env: dict[str, str]) -> FakeContainer:
        n = self.counters.get(service, 0)
        self.counters[service] = n + 1
        c = FakeContainer(f"{service}_{n}")
        self.containers[c.id] = c
        return c

    def get_containers(self, states: Any = None) -> list[FakeContainer]:
        return list(self.containers.values())

    def kill_container(self, cid: str) -> None:
        self.containers[cid].state = "KILLED"


def cpu(fn: Any) -> tuple[float, Any]:
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=1000)
    n = ap.parse_args().tasks
    spec = JobSpec(name="scale", command=("python", "t.py"), framework="tensorflow",
                   roles={"chief": RoleSpec("chief", 1), "worker": RoleSpec("worker", n - 11, gpus=1),
                          "ps": RoleSpec("ps", 10)}).validate()
    app = FakeApp()
    table = TaskTable.for_job(spec)
    job = master.Job(app.id, spec, table, time.time())
    rows: dict[str, float] = {}

    for t in table.tasks:  # skein asks for the gang from the application spec, one instance per task
        app.containers[f"{t.role}_{t.index}"] = FakeContainer(f"{t.role}_{t.index}")
    app.counters = {r: role.instances for r, role in spec.roles.items()}
    rows["adopt the gang's containers"], _ = cpu(lambda: master.adopt_initial(table, time.time()))

    def allocate() -> None:  # YARN grants every container on 100 nodes
        for i, c in enumerate(app.containers.values()):
            c.state, c.yarn_container_id = "RUNNING", f"container_1_0001_01_{i + 2:06d}"
            c.yarn_node_http_address, c.start_time = f"node{i % 100}:8042", datetime.now()
    allocate()
    rows["allocation bookkeeping (sync)"], _ = cpu(lambda: master.sync(app, table))

    def register() -> None:
        for t in table.tasks:
            app.kv[protocol.kv_task_addr(t.role, t.index)] = json.dumps(
                {"address": f"{t.host}:{20000 + t.index}", "staging_s": 0.1,
                 protocol.RECORD_CONTAINER: t.yarn_container_id}).encode()
        master.sync(app, table)
        pool = gpus.DevicePool()
        info = {"gpuDeviceInformation": {"gpu": [{"minor_number": k} for k in range(16)]}}
        nodegpus.node_gpu_info = lambda _addr: info  # the NodeManager's answer, without HTTP
        master.bind_gpus(app, table, pool, set())
        assert table.all_registered()
        return json.dumps(table.cluster_view())
    rows["registration of all tasks + cluster view"], view = cpu(register)

    rows["status change check (each 0.25 s poll)"], _ = cpu(job.signature)
    walls = []
    for _ in range(REPEATS):  # the median of a few: one sample on a shared machine is noise
        t0 = time.perf_counter()
        doc = job.doc("RUNNING")
        body = json.dumps(doc)
        walls.append(time.perf_counter() - t0)
    rows["status JSON (wall, median of 5)"] = statistics.median(walls)
    rows["status page HTML"], html = cpu(lambda: page.render(doc))
    restart = TaskTable.for_job(spec)  # the restart path: a request with the task's env, per task
    rows["request all tasks again (restart path)"], _ = cpu(
        lambda: [master.request_container(app, spec, t, time.time()) for t in restart.tasks])
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"am_scale: {n} tasks (tensorflow: 1 chief, {n - 11} workers x 1 GPU, 10 ps; 100 nodes)")
    print(f"{'phase':<44}{'ms':>10}")
    for k, v in rows.items():
        print(f"{k:<44}{v * 1000:>10.1f}")
    print(f"{'peak RSS (MiB)':<44}{peak_mib:>10.1f}")
    print(f"sizes: cluster view {len(view) // 1024} KiB, status JSON {len(body) // 1024} KiB, "
          f"page {len(html) // 1024} KiB")
    targets = {"register_and_view_cpu_s<1": rows["registration of all tasks + cluster view"] < 1,
               "status_json_ms<100": rows["status JSON (wall, median of 5)"] < 0.1, "peak_rss_mib<300": peak_mib < 300}
    print(json.dumps({"benchmark": "am_scale", "tasks": n, **{k: round(v, 4) for k, v in rows.items()},
                      "peak_rss_mib": round(peak_mib, 1), "targets_met": targets}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
