"""am_scale: the ApplicationMaster's bookkeeping for a 1,000-task job, in-process.

Drives appmaster.am's real functions (adopt_initial, sync,
bind_gpus, the status document, the page, request_container) against the tests' in-memory
stand-in for skein's ApplicationClient (tests/fakes.py), so only tfyarn's own work is measured:
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
from pathlib import Path
from typing import Any

REPEATS = 5

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from appmaster.am import gpus, master, page  # noqa: E402
from appmaster.am.tasks import TaskTable  # noqa: E402
from tests.fakes import FakeApp  # noqa: E402
from tfyarn import nodegpus, protocol, wire  # noqa: E402
from tfyarn.spec import JobSpec, RoleSpec  # noqa: E402


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
    # skein asks for the gang from the application spec, one container per task
    app = FakeApp.with_services({r: role.instances for r, role in spec.roles.items()})
    table = TaskTable.for_job(spec)
    job = master.Job(app.id, spec, table, time.time())
    rows: dict[str, float] = {}

    rows["adopt the gang's containers"], _ = cpu(lambda: master.adopt_initial(table, time.time()))
    app.allocate_all([f"node{i}:8042" for i in range(100)])  # YARN grants every container on 100 nodes
    rows["allocation bookkeeping (sync)"], _ = cpu(lambda: master.sync(app, table))

    def register() -> None:
        for t in table.tasks:
            record = wire.Registration(address=f"{t.host}:{20000 + t.index}", staging_s=0.1,
                                       container=t.yarn_container_id)
            app.kv[protocol.kv_task_addr(t.role, t.index)] = record.to_json().encode()
        master.sync(app, table)
        pool = gpus.DevicePool()
        info = {"gpuDeviceInformation": {"gpu": [{"minor_number": k} for k in range(16)]}}
        nodegpus.node_gpu_info = lambda _addr: info  # the NodeManager's answer, without HTTP
        master.bind_gpus(app, table, pool, set())
        assert table.all_registered()
        return wire.ClusterView.of(table.cluster_view()).to_json()
    rows["registration of all tasks + cluster view"], view = cpu(register)

    rows["status change check (each 0.25 s poll)"], _ = cpu(job.signature)
    walls = []
    for _ in range(REPEATS):  # the median of a few: one sample on a shared machine is noise
        t0 = time.perf_counter()
        doc = job.status("RUNNING")  # as the AM's loop builds and serializes it
        body = doc.to_json()
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
