"""Docker images for a job's tasks: the spec's checks, and the `docker run` the executor runtime starts.

Two runtimes run a task in an image. ``executor``: the executor stages,
registers and rendezvous on the node as always, then runs the user's command
with `docker run` (host network, the task's dir mounted at the same path,
YARN's memory and vcores as limits, the bound GPUs); it works wherever the
nodes have Docker. ``yarn``: YARN's LinuxContainerExecutor starts the whole
container in the image (tfyarn.plan sets the variables Hadoop documents),
so the image must hold Python and tfyarn. Pure functions: nothing here runs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tfyarn.errors import SpecError
from tfyarn.fields import check_env, show

RUNTIMES = ("auto", "executor", "yarn")
# [registry[:port]/]name[/name...][:tag][@sha256:digest], as Docker accepts it (names lower case).
_NAME = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_IMAGE_RE = re.compile(
    rf"(?:[A-Za-z0-9.-]+(?::[0-9]+)?/)?{_NAME}(?:/{_NAME})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?"
    r"(?:@sha256:[0-9a-f]{64})?"
)
_MOUNT_MODES = ("ro", "rw")
CODE_IN_IMAGE = "/opt/tfyarn-node"
STDIO_IN_IMAGE = f"{CODE_IN_IMAGE}/appmaster/executor/stdio"  # line-buffered stdio: appmaster.executor.stdio
# Set inside the image by tfyarn (or Docker): a job's docker_env may not.
_OWN_ENV = frozenset({"HOME", "PATH", "HOSTNAME", "CUDA_VISIBLE_DEVICES"})
# The task's variables that the user's command gets inside the image, besides those tfyarn computed
# for it (the executor's ``extra``) and the job's env: host paths (PATH, PYTHONPATH, JAVA_HOME ...) stay out.
_PASSED_PREFIXES = ("TFYARN_",)
_PASSED = frozenset({"HADOOP_TOKEN_FILE_LOCATION", "PYTHONUNBUFFERED", "CONTAINER_ID", "HADOOP_USER_NAME"})


def check_image(value: Any, what: str) -> str:
    """An image reference Docker accepts, or "" (no image)."""
    if not isinstance(value, str):
        raise SpecError(f"{what}: expected an image name such as tfyarn-tf:latest, got {show(value)}")
    if value and (len(value) > 255 or not _IMAGE_RE.fullmatch(value)):
        raise SpecError(
            f"{what}: {show(value)} is not a Docker image reference "
            "([registry/]name[:tag][@sha256:digest], names in lower case), e.g. tfyarn-tf:latest"
        )
    return value


def check_mount(value: Any, what: str) -> tuple[str, str, str]:
    """``SRC:DST[:ro|rw]``, both absolute paths on the node and in the image: (src, dst, mode)."""
    parts = value.split(":") if isinstance(value, str) else []
    if len(parts) == 2:
        parts.append("rw")
    ok = len(parts) == 3 and all(p.startswith("/") for p in parts[:2]) and parts[2] in _MOUNT_MODES
    if not ok or "," in value or any(c.isspace() for c in value):
        raise SpecError(
            f"{what}: {show(value)} is not SRC:DST[:ro] with absolute paths (no commas or spaces), "
            "e.g. /data/shared:/data:ro"
        )
    return parts[0], parts[1], parts[2]


def check_docker(image: Any, runtime: Any, mounts: Sequence[Any], env: Any) -> None:
    """The job's Docker keys; the roles' images are checked with their roles."""
    check_image(image, "docker_image")
    if runtime not in RUNTIMES:
        raise SpecError(f"docker_runtime: {show(runtime)} is not one of {', '.join(RUNTIMES)}")
    for i, m in enumerate(mounts):
        check_mount(m, f"docker_mounts[{i}]")
    check_env(env, "docker_env")
    for k in env:
        if k in _OWN_ENV:
            raise SpecError(f"docker_env: {k} is set inside the image by tfyarn or Docker; choose another name")


@dataclass(frozen=True)
class DockerTask:
    """What one task's `docker run` needs; the executor fills it from its container."""

    image: str
    name: str  # the Docker container's name, from the YARN container id
    workdir: str  # the YARN container's dir: mounted at the same path, and the command's cwd
    memory_mb: int
    vcores: int
    gpus: tuple[int, ...] = ()  # the node's device numbers bound to this task
    user: str = ""  # uid:gid; "" runs as the image's user
    mounts: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None  # docker_env: set inside the image only
    # Where the node's tfyarn and appmaster packages are (their parent dir): mounted read-only at
    # CODE_IN_IMAGE, so an image needs no tfyarn (tf_server, the stdio hook, tfyarn.report). "": none.
    code_root: str = ""
    pythonpath: str = ""  # the job's own PYTHONPATH (its --env), after tfyarn's in the image
    # What YARN localized into the workdir (--file, a packed env) are symlinks into the NodeManager's
    # filecache: their targets, mounted read-only at the same paths, so the links resolve in the image.
    localized: tuple[str, ...] = ()


def container_name(yarn_container_id: str) -> str:
    """``tfyarn-<container id>``: one Docker container per YARN container, found again by name."""
    return "tfyarn-" + re.sub(r"[^A-Za-z0-9_.-]", "-", yarn_container_id or "task")


def passed_names(task_env: Mapping[str, str], computed: Iterable[str]) -> list[str]:
    """Which of the task's variables go into the image: ``computed`` (TF_CONFIG, torchrun's, the
    thread counts, the input dirs...), tfyarn's own, the token file; never the node's paths."""
    names = set(computed) | {k for k in task_env if k.startswith(_PASSED_PREFIXES) or k in _PASSED}
    return sorted(n for n in names if n in task_env and n not in ("PATH", "PYTHONPATH"))


def run_argv(task: DockerTask, command: Sequence[str], names: Sequence[str], docker: str = "docker") -> list[str]:
    """`docker run` of ``command`` in ``task.image``.

    Values travel in the docker CLI's own environment (``-e NAME``), never on
    its command line, where any user of the node could read them. Inside,
    the bound GPUs are numbered from 0, so CUDA_VISIBLE_DEVICES follows.
    """
    # --init: Docker's init is PID 1 and passes SIGTERM on, so the command stops as it would outside an
    # image (a PID 1 without a handler ignores it: the task ran on until its container was removed).
    argv = [docker, "run", "--rm", "--init", "--name", task.name, "--network", "host"]
    argv += ["--memory", f"{task.memory_mb}m", "--memory-swap", f"{task.memory_mb}m", "--cpus", str(task.vcores)]
    argv += ["-v", f"{task.workdir}:{task.workdir}", "-w", task.workdir]
    if task.user:
        argv += ["--user", task.user]
    for path in task.localized:
        argv += ["-v", f"{path}:{path}:ro"]
    for m in task.mounts:
        argv += ["-v", m]
    if task.code_root:
        for package in ("tfyarn", "appmaster"):
            argv += ["-v", f"{task.code_root}/{package}:{CODE_IN_IMAGE}/{package}:ro"]
        argv += ["-e", "PYTHONPATH"]  # its value in run_env: the image's paths, not the node's
    if task.gpus:
        argv += ["--gpus", f'"device={",".join(map(str, task.gpus))}"']
        argv += ["-e", "CUDA_VISIBLE_DEVICES=" + ",".join(str(i) for i in range(len(task.gpus)))]
    for n in names:
        if n not in ("CUDA_VISIBLE_DEVICES", "PYTHONPATH"):
            argv += ["-e", n]
    for k in sorted(task.env or {}):
        argv += ["-e", k]
    return [*argv, task.image, *command]


def run_env(task: DockerTask, env: Mapping[str, str]) -> dict[str, str]:
    """The docker CLI's environment: the task's, and the job's docker_env (whose values ``-e NAME`` reads)."""
    out = {**env, **(task.env or {})}
    if task.code_root:
        out["PYTHONPATH"] = ":".join(p for p in (STDIO_IN_IMAGE, CODE_IN_IMAGE, task.pythonpath) if p)
    return out


_LCE = "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor"
# What the `yarn` runtime sets on each task's container, as Hadoop's DockerLinuxContainerRuntime reads them.
YARN_RUNTIME_TYPE = "YARN_CONTAINER_RUNTIME_TYPE"
YARN_IMAGE = "YARN_CONTAINER_RUNTIME_DOCKER_IMAGE"
YARN_NETWORK = "YARN_CONTAINER_RUNTIME_DOCKER_CONTAINER_NETWORK"
YARN_MOUNTS = "YARN_CONTAINER_RUNTIME_DOCKER_MOUNTS"
YARN_RUN_OVERRIDE = "YARN_CONTAINER_RUNTIME_DOCKER_RUN_OVERRIDE_DISABLE"


def yarn_runtime_allowed(conf: Mapping[str, str]) -> bool:
    """Whether the cluster's yarn-site lets containers ask for YARN's Docker runtime."""
    allowed = {r.strip().lower() for r in conf.get("yarn.nodemanager.runtime.linux.allowed-runtimes", "").split(",")}
    return conf.get("yarn.nodemanager.container-executor.class", "") == _LCE and "docker" in allowed


def resolve_runtime(runtime: str, conf: Mapping[str, str] | None) -> str:
    """``auto`` as ``yarn`` when the cluster's config (None: unknown) allows it, else ``executor``."""
    if runtime != "auto":
        return runtime
    return "yarn" if conf is not None and yarn_runtime_allowed(conf) else "executor"


def yarn_runtime_env(image: str, mounts: Sequence[str]) -> dict[str, str]:
    """A task container's variables for YARN's Docker runtime: the image, host network, the mounts.

    The image's own entry point is not used (RUN_OVERRIDE_DISABLE stays unset): YARN runs the
    container's launch script, which starts tfyarn's executor with the image's ``python``.
    """
    env = {YARN_RUNTIME_TYPE: "docker", YARN_IMAGE: image, YARN_NETWORK: "host"}
    if mounts:
        env[YARN_MOUNTS] = ",".join(m if m.count(":") == 2 else f"{m}:rw" for m in mounts)
    return env


def current_user() -> str:
    """The YARN container's uid:gid: files the command writes in the mounted dir stay the task's."""
    return f"{os.getuid()}:{os.getgid()}"
