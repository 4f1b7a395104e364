"""Docker tasks (the executor runtime) on the real cluster and a real Docker engine.

The image is a busybox one, imported from Debian's static busybox (no
registry is reachable; `make docker` installs the engine and busybox-static
and starts dockerd when none answers). It has no Python and no tfyarn: the
executor stays on the node, only the command runs in the image. It is
built once per machine, tagged by the content of busybox.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import uuid
from pathlib import Path

import pytest

from tests.integration.conftest import app_id_from, hadoop, status_json, tfyarn, wait_for
from tests.integration.procs import container_pids, job_processes, wait_none_left

BUSYBOX = Path("/bin/busybox")
ROOT = Path(__file__).resolve().parents[2]
APPLETS = ("sh", "cat", "cp", "mkdir", "sleep", "id", "test", "[", "echo", "ls", "head")


def docker(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> str:
    info = docker("info")
    assert info.returncode == 0, f"no Docker engine answers (`make docker` installs and starts one): {info.stderr}"
    assert BUSYBOX.is_file(), "no /bin/busybox (`make docker` installs Debian's busybox-static)"
    tag = f"tfyarn-smoke:{hashlib.sha256(BUSYBOX.read_bytes()).hexdigest()[:12]}"
    if docker("image", "inspect", tag).returncode != 0:
        rootfs = tmp_path_factory.mktemp("rootfs")
        tar = rootfs / "rootfs.tar"
        with tarfile.open(tar, "w") as t:
            t.add(BUSYBOX, "bin/busybox")
            for name in APPLETS:
                link = tarfile.TarInfo(f"bin/{name}")
                link.type, link.linkname = tarfile.SYMTYPE, "busybox"
                t.addfile(link)
            tmp = tarfile.TarInfo("tmp")
            tmp.type, tmp.mode = tarfile.DIRTYPE, 0o1777
            t.addfile(tmp)
        with open(tar, "rb") as f:
            made = subprocess.run(["docker", "import", "-", tag], stdin=f, capture_output=True, text=True,
                                  timeout=120)
        assert made.returncode == 0, made.stderr
    return tag


@pytest.fixture(scope="module")
def base_image() -> str:
    """docker/build-image.sh base: Debian bookworm's Python and nothing else (built once per machine)."""
    res = subprocess.run(["bash", str(ROOT / "docker" / "build-image.sh"), "base"], capture_output=True, text=True,
                         timeout=900)
    assert res.returncode == 0, res.stderr
    return res.stdout.split()[-1]


def boxes(app: str) -> list[str]:
    """The job's Docker containers, running or not (named after their YARN containers)."""
    res = docker("ps", "-a", "--format", "{{.Names}}")
    assert res.returncode == 0, res.stderr
    return [n for n in res.stdout.split() if app.removeprefix("application_") in n]


def test_a_docker_task_stages_its_input_runs_in_the_image_under_yarns_memory_and_publishes(
        cluster, yarn_apps, image, tmp_path):
    run = uuid.uuid4().hex[:8]
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.txt").write_text(f"staged {run}\n")
    put = hadoop(cluster, "hdfs", "dfs", "-put", str(tmp_path / "data"), f"/tmp/docker-{run}")
    assert put.returncode == 0, put.stderr
    script = ('mkdir -p out && cp "$TFYARN_INPUT/x.txt" out/ && { cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes; } > out/mem && '
              '{ [ -e /etc/os-release ] && echo node || echo image; } > out/where && id -u > out/uid && '
              'echo "$TFYARN_ROLE" > out/role')
    res = tfyarn("submit", "--wait", "--worker-memory", "512m", "--docker-image", image,
                 "--input", f"hdfs:///tmp/docker-{run}", "--output", f"./out:hdfs:///tmp/docker-{run}-out",
                 "--", "sh", "-c", script)
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 0 and "SUCCEEDED" in res.stdout, res.stdout + res.stderr
    got = tfyarn("fetch", f"hdfs:///tmp/docker-{run}-out", str(tmp_path / "out"))
    assert got.returncode == 0, got.stderr
    out = tmp_path / "out"
    assert (out / "x.txt").read_text() == f"staged {run}\n"  # staged on the node, read in the image
    assert (out / "where").read_text().strip() == "image"
    assert int((out / "mem").read_text()) == 512 * 2**20  # the YARN container's memory, as the limit
    assert (out / "uid").read_text().strip() == str(os.getuid())  # the YARN container's user
    assert (out / "role").read_text().strip() == "worker"
    assert boxes(app) == []


def test_a_command_the_image_lacks_fails_the_job_saying_so(cluster, yarn_apps, image):
    res = tfyarn("submit", "--wait", "--worker-memory", "512m", "--docker-image", image,
                 "--", "python", "-c", "print(1)")
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode != 0 and "FAILED" in res.stdout, res.stdout + res.stderr
    assert f"the command could not be run in image {image!r}" in res.stdout + res.stderr, res.stdout + res.stderr
    assert boxes(app) == []


def _running_box(app: str) -> str:
    return wait_for("the task's Docker container", lambda: (b := boxes(app)) and b[0], timeout_s=120)


def test_kill_leaves_no_docker_container_and_no_process(cluster, yarn_apps, image):
    res = tfyarn("submit", "--worker-memory", "512m", "--docker-image", image, "--", "sleep", "600")
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 0, res.stderr
    box = _running_box(app)
    inspect = json.loads(docker("inspect", box).stdout)[0]
    assert inspect["State"]["Running"] and inspect["HostConfig"]["NetworkMode"] == "host"
    assert inspect["HostConfig"]["Init"] is True  # docker-init is PID 1: the command gets the SIGTERM
    assert inspect["HostConfig"]["Memory"] == 512 * 2**20 and inspect["HostConfig"]["NanoCpus"] == 10**9
    # `tfyarn exec` into a Docker task runs in its container: there PID 1 is docker-init of the task's command.
    inside = tfyarn("exec", app, "--task", "worker:0", "--", "cat", "/proc/1/cmdline")
    assert inside.returncode == 0, inside.stderr
    assert inside.stdout.split("\0")[-3:] == ["sleep", "600", ""] and "docker-init" in inside.stdout, inside.stdout
    assert tfyarn("kill", app).returncode == 0
    wait_for("no Docker container of the job", lambda: boxes(app) == [], timeout_s=60)
    assert wait_none_left(app) == []


def test_a_sigkilled_executor_leaves_no_docker_container_and_no_process(cluster, yarn_apps, image):
    res = tfyarn("submit", "--worker-memory", "512m", "--docker-image", image, "--", "sleep", "600")
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 0, res.stderr
    _running_box(app)
    cid = next(t for t in status_json(app)["tasks"] if t["name"] == "worker:0")["yarn_container_id"]
    (executor,) = container_pids(cid, "appmaster.executor")
    os.kill(executor, 9)
    wait_for("no Docker container of the job", lambda: boxes(app) == [], timeout_s=60)
    end = wait_for("the job's end", lambda: (s := status_json(app)["state"]) in ("FAILED", "KILLED") and s,
                   timeout_s=120)
    assert end == "FAILED"
    assert wait_none_left(app) == [], job_processes(app)


def test_a_python_command_runs_on_the_images_python_with_tfyarns_code_from_the_node(
        cluster, yarn_apps, base_image, tmp_path):
    """The image holds no tfyarn: the executor mounts the node's, so tf_server, tfyarn.report and the
    line-buffered stdio hook work there."""
    run = uuid.uuid4().hex[:8]
    script = ("import json, os, sys\n"
              "import tfyarn.protocol, appmaster.executor.tf_server\n"
              "os.makedirs('out')\n"
              "json.dump({'python': sys.executable, 'version': sys.version.split()[0],\n"
              "           'line_buffered': sys.stdout.line_buffering, 'tfyarn': tfyarn.protocol.__file__,\n"
              "           'mine': os.environ.get('MINE')}, open('out/info.json', 'w'))\n")
    res = tfyarn("submit", "--wait", "--worker-memory", "512m", "--docker-image", base_image, "--env", "MINE=1",
                 "--output", f"./out:hdfs:///tmp/docker-{run}-py", "--", "python", "-c", script)
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 0 and "SUCCEEDED" in res.stdout, res.stdout + res.stderr
    got = tfyarn("fetch", f"hdfs:///tmp/docker-{run}-py", str(tmp_path / "out"))
    assert got.returncode == 0, got.stderr
    info = json.loads((tmp_path / "out" / "info.json").read_text())
    assert info["python"] == "/usr/bin/python" and info["version"].startswith("3.11."), info  # Debian's, the image's
    assert info["tfyarn"].startswith("/opt/tfyarn-node/tfyarn/"), info
    assert info["line_buffered"] is True and info["mine"] == "1", info
    assert boxes(app) == []


def test_the_guard_retries_a_removal_that_failed_until_the_container_is_gone(image, tmp_path):
    """The executor's own `docker rm -f`, cut short by the NodeManager's SIGKILL, leaves a removal in
    progress that makes the guard's first `rm -f` fail: the guard must try again, not give up."""
    from appmaster.executor import dockertask

    name = f"tfyarn-guard-test-{uuid.uuid4().hex[:8]}"
    assert docker("run", "-d", "--name", name, image, "sleep", "600").returncode == 0
    real = subprocess.run(["which", "docker"], capture_output=True, text=True).stdout.strip()
    flaky = tmp_path / "docker"  # fails its first `rm` as the engine does while a removal is in progress
    flaky.write_text(f'#!/bin/sh\nif [ "$1" = rm ] && [ ! -e {tmp_path}/failed ]; then\n'
                     f'  touch {tmp_path}/failed; echo "removal already in progress" >&2; exit 1\nfi\n'
                     f'exec {real} "$@"\n')
    flaky.chmod(0o755)
    try:
        guard = subprocess.Popen([sys.executable, "-c", dockertask._GUARD, str(flaky), name], stdin=subprocess.PIPE)
        assert guard.stdin is not None
        guard.stdin.close()  # the executor is gone
        guard.wait(timeout=60)
        assert (tmp_path / "failed").exists()
        assert docker("inspect", name).returncode != 0, f"{name} outlived its guard"
    finally:
        docker("rm", "-f", name)
