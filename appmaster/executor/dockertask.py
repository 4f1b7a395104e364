"""The executor runtime of Docker: the user's command in `docker run`, and nothing of it left behind.

The executor has already staged, registered and met the gang on the node;
only the command moves into the image (tfyarn.docker builds its argv). A
Docker container is not a child of the executor: a NodeManager's SIGKILL
of the task's process group would leave it running. So a guard process,
outside that group, holds the read end of a pipe only the executor writes
to; when the executor is gone, however it went, the guard removes the
container by name. After a normal end the executor removes it itself.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence

from tfyarn import docker, protocol
from tfyarn.spec import JobSpec

log = logging.getLogger("tfyarn.executor.docker")

# Run by the guard: wait for EOF on stdin (the executor's end closes when it exits), then remove, and
# retry until the engine no longer knows the name: a first `rm -f` can meet a removal in progress (the
# executor's own, cut short by the NodeManager's SIGKILL) and fail, leaving the container running.
_GUARD = (
    "import subprocess, sys, time\n"
    "sys.stdin.buffer.read()\n"
    "docker, name = sys.argv[1:3]\n"
    "for _ in range(300):\n"
    "    subprocess.run([docker, 'rm', '-f', name], capture_output=True, timeout=120)\n"
    "    if subprocess.run([docker, 'inspect', name], capture_output=True, timeout=60).returncode:\n"
    "        break\n"
    "    time.sleep(1)\n"
)
_guard_pipes: list[int] = []  # the write ends this process holds open until it exits


class DockerMissing(RuntimeError):
    pass


def docker_binary() -> str:
    found = shutil.which("docker")
    if not found:
        raise DockerMissing(
            "this node has no `docker` command: --docker-runtime executor needs Docker on every node "
            "(or use --docker-runtime yarn on a cluster that runs YARN's Docker runtime)"
        )
    return found


def prepare(
    spec: JobSpec,
    role: str,
    command: Sequence[str],
    env: dict[str, str],
    computed: Iterable[str],
    devices: Sequence[int],
    workdir: str,
    container_id: str,
) -> tuple[list[str], dict[str, str], str]:
    """(argv, env, Docker container name) that run ``command`` in ``role``'s image."""
    binary = docker_binary()
    rs = spec.roles[role]
    task = docker.DockerTask(
        image=spec.image_for(role),
        name=docker.container_name(container_id),
        workdir=workdir,
        memory_mb=rs.memory_mb,
        vcores=rs.vcores,
        gpus=tuple(devices),
        user=docker.current_user(),
        mounts=spec.docker_mounts,
        env=spec.docker_env,
        code_root=code_root(),
        pythonpath=spec.env.get("PYTHONPATH", ""),
        localized=localized(workdir),
    )
    argv = docker.run_argv(task, command, docker.passed_names(env, computed), docker=binary)
    return argv, docker.run_env(task, env), task.name


def localized(workdir: str) -> tuple[str, ...]:
    """Where the workdir's symlinks (YARN's localized files) really are, when that is outside it."""
    inside = os.path.realpath(workdir) + os.sep
    found = set()
    with os.scandir(workdir) as entries:
        for e in entries:
            if e.is_symlink():
                target = os.path.realpath(e.path)
                if not target.startswith(inside) and os.path.exists(target):
                    found.add(target)
    return tuple(sorted(found))


def code_root() -> str:
    """The dir holding this executor's tfyarn and appmaster packages (an install's site dir, or a checkout)."""
    import appmaster
    import tfyarn

    roots = {os.path.dirname(os.path.dirname(os.path.abspath(m.__file__ or ""))) for m in (tfyarn, appmaster)}
    return roots.pop() if len(roots) == 1 else ""


def guard(name: str) -> None:
    """Start the process that removes Docker container ``name`` once this executor has exited."""
    read, write = os.pipe()  # both ends non-inheritable: the user's command never holds the write end
    subprocess.Popen(
        [sys.executable, "-c", _GUARD, docker_binary(), name],
        stdin=read,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # outside the task's process group, which the NodeManager kills
    )
    os.close(read)
    _guard_pipes.append(write)


def remove(name: str) -> None:
    """Remove the Docker container now (it may be gone already: ``--rm``)."""
    try:
        subprocess.run([docker_binary(), "rm", "-f", name], capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError, DockerMissing) as e:
        log.warning(f"could not remove Docker container {name}: {e}")


def explain(code: int, image: str) -> str:
    """A line for the exit codes that are Docker's, not the command's."""
    if code == 125:
        return f"docker could not start a container of image {image!r} on this node (is it there? `docker images`)"
    if code in (126, protocol.EXIT_COMMAND_NOT_FOUND):
        return f"the command could not be run in image {image!r} (is it installed there?)"
    return ""
