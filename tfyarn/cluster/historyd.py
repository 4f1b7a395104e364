"""The local cluster's history page: `cluster up` starts `tfyarn history serve` for it, `down` stops it.

Finished jobs' tracking URLs in YARN's list show N/A once their AM is gone;
the history page renders their saved status instead (tfyarn.historyweb).
On the local cluster it runs beside the daemons, as the cluster's owner, on
loopback (it shows what that user may see), in the cluster's environment
(its skein driver included). Not on a Kerberized cluster: it would need a
login of its own there; run `tfyarn history serve` with a ticket instead.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tfyarn import protocol
from tfyarn.cluster import daemons, driver
from tfyarn.cluster.layout import ClusterLayout
from tfyarn.errors import ClusterError

PORT = protocol.HISTORY_PORT
START_TIMEOUT_S = 30.0


def pid_file(layout: ClusterLayout) -> Path:
    return layout.for_node(1).pid_dir / "history.pid"


def log_file(layout: ClusterLayout) -> Path:
    return layout.for_node(1).log_dir / "history.log"


def url() -> str:
    return f"http://127.0.0.1:{PORT}/"


def running_pid(layout: ClusterLayout) -> int | None:
    """The history server's pid if its pid file names a live `history serve` of this cluster."""
    layout = layout.for_node(1)
    try:
        pid = int(pid_file(layout).read_text().strip())
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return None
    conf = f"{protocol.ENV_HADOOP_CONF_DIR}={layout.conf_dir}".encode()
    return pid if b"history" in argv and b"serve" in argv and conf in environ else None


def start(layout: ClusterLayout) -> int | None:
    """Start it unless it runs or the cluster is Kerberized; its pid, or None when there is none.

    A port another process holds is a ClusterError naming it (and nothing is left running).
    """
    layout = layout.for_node(1)
    if layout.kerberized:
        return None
    if pid := running_pid(layout):
        return pid
    if daemons.port_open(PORT):
        raise ClusterError(
            f"port {PORT} is taken, so the history page cannot start; stop what holds it "
            f"(`ss -ltnp 'sport = :{PORT}'` names it) and run `tfyarn cluster up` again"
        )
    env = {**daemons.daemon_env(layout), protocol.ENV_SKEIN_CONFIG: str(driver.skein_dir(layout))}
    env.pop(protocol.ENV_HADOOP_USER_NAME, None)
    log_file(layout).parent.mkdir(parents=True, exist_ok=True)
    with open(log_file(layout), "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tfyarn", "history", "serve", "--port", str(PORT)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    pid_file(layout).parent.mkdir(parents=True, exist_ok=True)
    pid_file(layout).write_text(f"{proc.pid}\n")
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        if daemons.port_open(PORT):
            return proc.pid
        time.sleep(0.2)
    stop(layout)
    tail = (log_file(layout).read_text(errors="replace").strip().splitlines() or ["no output"])[-1]
    raise ClusterError(f"the history page did not start on port {PORT} ({tail}); see {log_file(layout)}")


def stop(layout: ClusterLayout, grace_s: float = 10.0) -> bool:
    """Stop it if it runs and forget its pid; whether it was running."""
    layout = layout.for_node(1)
    pid = running_pid(layout)
    if pid:
        daemons.terminate(pid, grace_s)
    pid_file(layout).unlink(missing_ok=True)
    return bool(pid)
