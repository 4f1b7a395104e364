"""Admission checks and job look-ups against the real cluster's ResourceManager.

Each refusal is asked of the real RM (its /conf, scheduler and nodes REST
answers, in the format it really sends) and must be one `Error:` line, exit 2,
with no application submitted. Others may submit jobs to the same cluster at
the same time, so "nothing submitted" is checked by a name unique to the test,
not by counting applications.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid

import pytest

from tests.integration.conftest import TFYARN, app_id_from, status_json, tfyarn
from tfyarn.rest import fetch_json


def rm_app_names(cluster) -> set[str]:
    apps = (fetch_json(f"{cluster.layout.rm_web}/ws/v1/cluster/apps") or {}).get("apps") or {}
    return {a["name"] for a in apps.get("app") or []}


def one_error_line(res: subprocess.CompletedProcess[str], code: int, *texts: str) -> str:
    assert res.returncode == code, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    for text in texts:
        assert text in lines[0], lines[0]
    return lines[0]


def test_client_reads_the_real_schedulers_limits(cluster):
    """The RM answers /conf in JSON to tfyarn's Accept header; the limits must come out of it."""
    from tfyarn.client import Client

    ref = {p["key"]: p["value"] for p in fetch_json(f"{cluster.layout.rm_web}/conf")["properties"]}
    with Client() as client:
        limits = client.limits()
        nodes = client.nodes()
    assert limits.max_memory_mb == int(ref["yarn.scheduler.maximum-allocation-mb"])
    assert limits.max_vcores == int(ref["yarn.scheduler.maximum-allocation-vcores"])
    assert "yarn.io/gpu" in limits.resource_types  # the local cluster defines GPUs (resource-types.xml)
    assert nodes and max(n.memory_mb for n in nodes) > 0


REFUSED = [
    # (flags, texts the one error line must hold); the local cluster: scheduler max 8192 MiB / 16 vcores,
    # one node of 16384 MiB, 16 vcores, 4 GPUs; queues root.default and root.research.
    (["--framework", "pytorch", "--num-workers", "2", "--worker-memory", "10g"],
     ["--worker-memory", "10240 MiB", "maximum container size of 8192 MiB"]),
    (["--am-memory", "9g"], ["--am-memory", "ApplicationMaster container asks 9216 MiB", "8192"]),
    (["--worker-vcores", "17"], ["--worker-vcores", "17 vcores", "maximum of 16"]),
    (["--worker-gpus", "5"], ["--worker-gpus", "5 GPU(s)", "the largest node offers 4"]),
    (["--queue", "nosuchqueue"], ["--queue", "no queue 'nosuchqueue'", "default, research"]),
    (["--queue", "root"], ["--queue", "root is a parent queue", "default, research"]),
]


@pytest.mark.parametrize("flags,texts", REFUSED, ids=[" ".join(f) for f, _ in REFUSED])
def test_over_the_limit_is_refused_before_submission(cluster, flags, texts):
    name = f"adm-{uuid.uuid4().hex[:10]}"
    res = tfyarn("submit", "--name", name, *flags, "--", "python", "-c", "1")
    one_error_line(res, 2, *texts)
    assert name not in rm_app_names(cluster)


UNKNOWN_APP_COMMANDS = [("status",), ("status", "--json"), ("kill",), ("logs",), ("logs", "--task", "worker:0"),
                        ("save", "--timeout", "5"), ("fetch", "--list")]


@pytest.mark.parametrize("cmd", UNKNOWN_APP_COMMANDS, ids=[" ".join(c) for c in UNKNOWN_APP_COMMANDS])
def test_an_application_the_rm_does_not_know_is_one_line(cluster, cmd):
    started = fetch_json(f"{cluster.layout.rm_web}/ws/v1/cluster/info")["clusterInfo"]["id"]
    app = f"application_{started}_999999"  # this RM's id space, a sequence number it never gave
    res = tfyarn(*cmd, app, timeout=120)
    one_error_line(res, 1, f"application {app} is not known to the ResourceManager at 127.0.0.1:8032")


_BYPASS = textwrap.dedent("""
    # tfyarn submit with its admission checks off: what a cluster whose limits tfyarn cannot read would run.
    import sys
    from tfyarn.client import Client
    from tfyarn.cli.main import cli
    Client.admit = lambda *args, **kwargs: None
    cli(sys.argv[1:], prog_name="tfyarn")
""")


def test_java_stack_traces_are_trimmed_and_kept_in_json(cluster, yarn_apps):
    """A worker larger than the scheduler allows, submitted unchecked, is failed by YARN with a Java trace."""
    res = subprocess.run([sys.executable, "-c", _BYPASS, "submit", "--name", f"adm-trace-{uuid.uuid4().hex[:6]}",
                          "--num-workers", "1", "--worker-memory", "10g", "--wait", "--", "python", "-c", "1"],
                         capture_output=True, text=True, timeout=300)
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 4, (res.stdout, res.stderr)  # JobFailed
    final = [line for line in res.stdout.splitlines() if line.startswith(app)]
    assert final and "Invalid resource request!" in res.stdout, res.stdout
    assert "\tat " not in res.stdout and "at org.apache" not in res.stdout, res.stdout
    shown = tfyarn("status", app)
    assert shown.returncode == 0, shown.stderr
    assert "Invalid resource request!" in shown.stdout and "at org.apache" not in shown.stdout, shown.stdout
    doc = status_json(app)
    assert "Invalid resource request!" in doc["diagnostics"] and "\tat " not in doc["diagnostics"]
    assert doc["diagnostics_full"].startswith(doc["diagnostics"].splitlines()[0])
    assert "\tat org.apache.hadoop" in doc["diagnostics_full"]
    listed = json.loads(tfyarn("list", "--json").stdout)
    mine = [j for j in listed if j["app_id"] == app]
    assert mine and "\tat " not in mine[0]["diagnostics"] and "\tat " in mine[0]["diagnostics_full"]


def test_tfyarn_runs_unchanged_with_real_yarn_on_path(cluster):
    """The driver-start wrapper leaves a working `yarn classpath` alone (and `list` prints no warnings)."""
    res = subprocess.run([*TFYARN, "list", "--limit", "1"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stderr == "", res.stderr
