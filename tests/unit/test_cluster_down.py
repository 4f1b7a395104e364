"""`cluster down` stops exactly this cluster's leftover processes and nothing else.

Dummy Python sleepers play daemons, containers and innocent bystanders; each
writes a ready file once running, so the test never races its own setup.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waiting import wait_until
from tfyarn.cluster import daemons
from tfyarn.cluster.layout import ClusterLayout
from tfyarn.cluster.local import LocalCluster

NODEMANAGER = daemons.NODEMANAGER.main_class
NAMENODE = daemons.NAMENODE.main_class
# argv: python -c SLEEPER READY_FILE [anything else, only to be seen in the command line]
SLEEPER = "import sys, time; open(sys.argv[1], 'w').close(); time.sleep(1000)"
# A container process that starts a child which leaves the container dir and drops its environment.
PARENT = ("import subprocess, sys, time; open(sys.argv[1], 'w').close(); "
          "subprocess.Popen([sys.executable, '-c', sys.argv[3], sys.argv[2]], cwd='/', env={}); time.sleep(1000)")


class Procs:
    """Dummy processes of one test, each in a group of its own (or a chosen one) for teardown."""

    def __init__(self, tmp: Path):
        self.tmp, self.procs, self.n = tmp, [], 0

    def ready_file(self) -> Path:
        self.n += 1
        return self.tmp / f"ready-{self.n}"

    def sleeper(self, *args: str, cwd: Path | str = "/", env: dict[str, str] | None = None,
                group: int | None = None) -> subprocess.Popen:
        ready = self.ready_file()
        return self._spawn([sys.executable, "-c", SLEEPER, str(ready), *args], [ready], cwd, env, group)

    def container_with_child(self, cwd: Path, env: dict[str, str]) -> tuple[subprocess.Popen, Path]:
        """A container process and its env-less child; returns the parent and the child's ready file."""
        ready, child_ready = self.ready_file(), self.ready_file()
        proc = self._spawn([sys.executable, "-c", PARENT, str(ready), str(child_ready), SLEEPER],
                           [ready, child_ready], cwd, env, None)
        return proc, child_ready

    def _spawn(self, argv: list[str], ready: list[Path], cwd: Path | str,
               env: dict[str, str] | None, group: int | None) -> subprocess.Popen:
        # A group inside this session (setpgid cannot join another session's), else a new session.
        kw = {"process_group": group} if group is not None else {"start_new_session": True}
        proc = subprocess.Popen(argv, cwd=cwd, env={**os.environ, **(env or {})}, **kw)
        self.procs.append(proc)
        wait_until(lambda: all(r.exists() for r in ready), timeout_s=10, what=f"dummy {argv[:3]} to start")
        return proc

    def cleanup(self) -> None:
        for p in self.procs:
            try:
                os.killpg(os.getpgid(p.pid), signal.SIGKILL)  # groups this test created
            except ProcessLookupError:
                pass
            p.wait()


@pytest.fixture
def procs(tmp_path):
    p = Procs(tmp_path)
    yield p
    p.cleanup()


def make_layout(root: Path, tmp: Path) -> ClusterLayout:
    layout = ClusterLayout(root=root, jar_cache=tmp / "jars")
    layout.pid_dir.mkdir(parents=True)
    return layout


def container_dir(layout: ClusterLayout) -> tuple[Path, dict[str, str]]:
    """A container's working dir and the environment YARN gives its processes."""
    app = layout.nm_local_dir / "usercache" / "u" / "appcache" / "application_1_0001"
    cwd = app / "container_1_0001_01_000002"
    cwd.mkdir(parents=True)
    return cwd, {"CONTAINER_ID": "container_1_0001_01_000002", "LOCAL_DIRS": str(app)}


def gone(proc: subprocess.Popen, timeout_s: float = 5) -> bool:
    try:
        proc.wait(timeout_s)
        return True
    except subprocess.TimeoutExpired:
        return False


def pid_gone(ready_file: Path) -> bool:
    """Whether no live (non-zombie) process still runs the sleeper that wrote ``ready_file``."""
    needle = f"\0{ready_file}\0".encode()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if needle in (entry / "cmdline").read_bytes() and (entry / "stat").read_text().split(") ")[1][0] != "Z":
                return False
        except OSError:
            continue
    return True


def down(layout: ClusterLayout) -> list[str]:
    said: list[str] = []
    LocalCluster(layout).down(said.append)
    return said


def test_down_spares_a_look_alike_cluster_and_argv_that_only_mentions_the_root(tmp_path, procs):
    layout = make_layout(tmp_path / "cluster", tmp_path)
    twin = make_layout(tmp_path / "cluster2", tmp_path)  # root that starts with the same string
    cwd, env = container_dir(layout)
    twin_cwd, twin_env = container_dir(twin)
    daemon = procs.sleeper(daemons.marker(layout), NODEMANAGER)
    container = procs.sleeper(cwd=cwd, env=env)
    bystanders = [
        procs.sleeper(daemons.marker(twin), NODEMANAGER),             # the other cluster's daemon
        procs.sleeper(cwd=twin_cwd, env=twin_env),                     # the other cluster's container
        procs.sleeper(str(layout.log_dir / "namenode.log")),          # `tail -f <root>/logs/...`
        procs.sleeper(str(layout.nm_local_dir / "usercache")),        # `du -sh <root>/data/nm-local/...`
        procs.sleeper("-c", f"echo {daemons.marker(layout)} {NODEMANAGER}"),  # a shell mentioning the marker
        procs.sleeper(daemons.marker(layout)),                         # the marker alone: `grep -e <marker>`
        procs.sleeper(cwd=cwd),                                        # a user's shell in a container dir
    ]
    said = down(layout)
    assert gone(daemon) and gone(container)
    assert [p.poll() for p in bystanders] == [None] * len(bystanders)
    assert said == ["Stopped: 2 leftover process(es)"]


def test_down_stops_a_container_process_s_descendants_that_left_its_dir_and_environment(tmp_path, procs):
    layout = make_layout(tmp_path / "cluster", tmp_path)
    cwd, env = container_dir(layout)
    parent, child_ready = procs.container_with_child(cwd, env)
    down(layout)
    assert gone(parent)
    wait_until(lambda: pid_gone(child_ready), timeout_s=5, every_s=0.05, what="the env-less child to be stopped")


def test_down_spares_an_innocent_process_in_a_stray_s_process_group(tmp_path, procs):
    layout = make_layout(tmp_path / "cluster", tmp_path)
    cwd, env = container_dir(layout)
    innocent = procs.sleeper(group=0)  # leads its own group
    stray = procs.sleeper(cwd=cwd, env=env, group=innocent.pid)
    down(layout)
    assert gone(stray)
    assert innocent.poll() is None


def test_a_pid_file_naming_a_look_alike_cluster_s_daemon_is_not_ours(tmp_path, procs):
    layout = make_layout(tmp_path / "cluster", tmp_path)
    twin = make_layout(tmp_path / "cluster2", tmp_path)
    other = procs.sleeper(daemons.marker(twin), NAMENODE)
    daemons.NAMENODE.pid_file(layout).write_text(f"{other.pid}\n")  # stale file, pid reused
    assert daemons.running_pid(layout, daemons.NAMENODE) is None
    assert down(layout) == ["Nothing was running."]
    assert other.poll() is None


def test_a_pid_file_naming_this_cluster_s_daemon_is_stopped(tmp_path, procs):
    layout = make_layout(tmp_path / "cluster", tmp_path)
    ours = procs.sleeper(daemons.marker(layout), NAMENODE)
    daemons.NAMENODE.pid_file(layout).write_text(f"{ours.pid}\n")
    assert daemons.running_pid(layout, daemons.NAMENODE) == ours.pid
    assert down(layout) == ["Stopped: namenode"]
    assert gone(ours) and not daemons.NAMENODE.pid_file(layout).exists()


def test_the_marker_matches_the_same_dir_spelled_differently(tmp_path, procs):
    layout = make_layout(tmp_path / "cluster", tmp_path)
    (tmp_path / "link").symlink_to(layout.root)
    daemon = procs.sleeper(f"-Dtfyarn.cluster={tmp_path}/link/../cluster", NODEMANAGER)
    down(ClusterLayout(root=tmp_path / "link", jar_cache=tmp_path / "jars"))
    assert gone(daemon)


def test_down_stops_an_extra_node_s_containers_and_stop_node_only_its_own(tmp_path, procs):
    layout = make_layout(tmp_path / "cluster", tmp_path)
    two, three = layout.for_node(2), layout.for_node(3)
    cwd1, env1 = container_dir(layout)
    cwd2, env2 = container_dir(two)
    cwd3, env3 = container_dir(three)
    on_one, on_two, on_three = procs.sleeper(cwd=cwd1, env=env1), procs.sleeper(cwd=cwd2, env=env2), \
        procs.sleeper(cwd=cwd3, env=env3)
    assert daemons.stop_node(two) == ["1 leftover process(es)"]
    assert gone(on_two) and on_one.poll() is None and on_three.poll() is None
    said = down(layout)
    assert gone(on_one) and gone(on_three)
    assert said == ["Stopped: node 3 (1 leftover process(es)), 1 leftover process(es)"]
