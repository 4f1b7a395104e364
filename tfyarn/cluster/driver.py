"""The local cluster's skein global driver: one Java driver that every tfyarn command against it reuses.

Without it, each command (submit, status, list, kill, ...) starts skein's
Java driver of its own: a JVM start and a Hadoop login, about 3 s and 3 CPU
seconds on a 2-core machine. `cluster up` starts one global driver in
``<dir>/skein`` (skein's config dir for this cluster: its TLS credentials and
its ``driver`` file) and `cluster env` exports ``SKEIN_CONFIG`` pointing
there, so tfyarn's commands find it (``tfyarn.skeindriver`` decides when it
may serve them). Not on a Kerberized cluster: a global driver keeps the
login it started with, and commands there log in as their own user.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tfyarn import hadoop_env, protocol
from tfyarn.cluster import daemons
from tfyarn.cluster.layout import ClusterLayout
from tfyarn.errors import ClusterError

START_TIMEOUT_S = 90.0

# Run in a Python of its own: skein reads SKEIN_CONFIG when it is imported.
_START = (
    """
import os, sys, skein
d = os.environ["%s"]
if not os.path.exists(os.path.join(d, "skein.crt")):
    skein.Security.new_credentials().to_directory(d)
print(skein.Client.start_global_driver(log=sys.argv[1], log_level="info", java_options=sys.argv[2:]))
"""
    % protocol.ENV_SKEIN_CONFIG
)


def skein_dir(layout: ClusterLayout) -> Path:
    """skein's config dir for this cluster (``SKEIN_CONFIG``)."""
    return layout.for_node(1).root / "skein"


def log_file(layout: ClusterLayout) -> Path:
    return layout.for_node(1).log_dir / "skein-driver.log"


def recorded(layout: ClusterLayout) -> tuple[str, int] | None:
    """The (address, pid) skein recorded for this cluster's driver, or None."""
    try:
        data = json.loads((skein_dir(layout) / "driver").read_text())
        return str(data["address"]), int(data["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def running_pid(layout: ClusterLayout) -> int | None:
    """The driver's pid if its recorded process is alive and is this cluster's skein driver."""
    found = recorded(layout)
    if found is None:
        return None
    try:
        argv = Path(f"/proc/{found[1]}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    ours = daemons.marker(layout.for_node(1)).encode() in argv and b"com.anaconda.skein.Driver" in argv
    return found[1] if ours else None


def java_options(layout: ClusterLayout) -> list[str]:
    """The driver's JVM flags: tfyarn's driver defaults, plus the cluster marker that `cluster down` looks for."""
    return [*hadoop_env.driver_java_options(), daemons.marker(layout.for_node(1))]


def start(layout: ClusterLayout) -> int | None:
    """Start the driver unless it runs (or the cluster is Kerberized); its pid, or None when there is none."""
    layout = layout.for_node(1)
    if layout.kerberized:
        return None
    if pid := running_pid(layout):
        return pid
    env = {**daemons.daemon_env(layout), protocol.ENV_SKEIN_CONFIG: str(skein_dir(layout))}
    env.pop(protocol.ENV_HADOOP_USER_NAME, None)  # it acts as the cluster's owner, as `cluster up` does
    res = subprocess.run(
        [sys.executable, "-c", _START, str(log_file(layout)), *java_options(layout)],
        env=env,
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_S,
    )
    pid = running_pid(layout)
    if res.returncode != 0 or pid is None:
        last = (res.stderr.strip().splitlines() or ["no output"])[-1]
        raise ClusterError(f"skein's global driver did not start ({last}); see {log_file(layout)}")
    return pid


def stop(layout: ClusterLayout, grace_s: float = 10.0) -> bool:
    """Stop the driver if it runs and forget it; whether one was running."""
    layout = layout.for_node(1)
    pid = running_pid(layout)
    if pid:
        daemons.terminate(pid, grace_s)
    (skein_dir(layout) / "driver").unlink(missing_ok=True)
    return bool(pid)
