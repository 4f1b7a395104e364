"""Integration fixtures: the real local cluster, and YARN apps killed when a test fails.

The cluster is the one `tfyarn cluster up` runs (the README's test command
starts it first); `up` is idempotent, so the fixture only ensures it.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import wait_until
from tfyarn.cluster import LocalCluster

TFYARN = [sys.executable, "-m", "tfyarn"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Tests that need the cluster to themselves, then those that freeze a daemon, then those that stop
    # and restart the cluster, run last (`make test` runs them in a serial phase of their own).
    items.sort(key=lambda it: (it.get_closest_marker("lifecycle") is not None,
                               it.get_closest_marker("disruptive") is not None,
                               it.get_closest_marker("exclusive") is not None))


@pytest.fixture(scope="session")
def cluster() -> LocalCluster:
    """The running cluster. Under pytest-xdist every worker calls this: `up` is taken under a lock on the
    cluster dir, and a worker that finds the cluster running only checks it (no rewrite of its scripts)."""
    c = LocalCluster()
    # Beside, not in, the cluster dir: `up` marks only a dir it wrote itself as purgeable.
    key = hashlib.sha256(str(c.layout.root.resolve()).encode()).hexdigest()[:12]
    with open(Path(tempfile.gettempdir()) / f"tfyarn-pytest-up-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (os.environ.get("PYTEST_XDIST_WORKER") and c.status().running):
            c.up(progress=lambda m: print(m, file=sys.stderr))
    for k, v in (line.removeprefix("export ").split("=", 1) for line in c.env_lines()):
        os.environ[k] = v.replace('"$PATH"', os.environ["PATH"])
    return c


def tfyarn(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the real CLI as a user would."""
    return subprocess.run([*TFYARN, *args], capture_output=True, text=True, timeout=timeout)


def status_json(app_id: str) -> dict[str, Any]:
    """`tfyarn status --json`, as a user would read it."""
    res = tfyarn("status", "--json", app_id)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def wait_for(what: str, check: Callable[[], Any], timeout_s: float = 180, every_s: float = 1) -> Any:
    """Poll ``check`` until it returns something true; fail naming ``what`` and its last answer."""
    return wait_until(check, timeout_s, every_s, what)


def hadoop(cluster: LocalCluster, cmd: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run one of the cluster's bin/ commands (yarn, hdfs, hadoop)."""
    return subprocess.run([str(cluster.layout.bin_dir / cmd), *args], capture_output=True, text=True,
                          timeout=timeout)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call":
        item.stash[_FAILED] = rep.failed


_FAILED = pytest.StashKey[bool]()


@pytest.fixture
def yarn_apps(request: pytest.FixtureRequest, cluster: LocalCluster) -> Iterator[list[str]]:
    """Tests append the app ids they submit; on failure those apps are killed and their logs printed."""
    apps: list[str] = []
    yield apps
    if request.node.stash.get(_FAILED, False):
        for app in apps:
            hadoop(cluster, "yarn", "application", "-kill", app)
            # The tasks' and the AM's own logs, not YARN's launch scripts (they filled the tail before).
            logs = hadoop(cluster, "yarn", "logs", "-applicationId", app, "-log_files_pattern", r".*\.log$")
            print(f"\n===== logs of {app} =====\n{logs.stdout[-30000:]}\n{logs.stderr[-2000:]}")


def app_id_from(output: str) -> str:
    for word in output.split():
        if word.startswith("application_"):
            return word.rstrip(":")
    raise AssertionError(f"no application id in output:\n{output}")


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def results(app_id: str, expected: int, timeout_s: float = 60) -> list[dict]:
    """The TFYARN_RESULT lines of a finished job, once YARN has aggregated its logs."""
    def found() -> list[dict]:
        out = subprocess.run([*TFYARN, "logs", app_id], capture_output=True, text=True).stdout
        lines = [json.loads(line.split(" ", 1)[1]) for line in out.splitlines() if line.startswith("TFYARN_RESULT ")]
        return lines if len(lines) >= expected else []
    return wait_for(f"{expected} result line(s) in the job's logs", found, timeout_s, every_s=2)
