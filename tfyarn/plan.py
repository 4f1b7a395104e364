"""Pure planning: a JobSpec becomes a skein ApplicationSpec, with no side effects.

``tfyarn submit --dry-run`` prints exactly what this returns. Every role
becomes a skein service with one instance per task, so skein asks YARN for
the whole gang as soon as its AM registers, while tfyarn's own AM script
(``appmaster.am``) is still starting; a task's index is its skein
instance number (tfyarn.taskenv). The AM asks for restarts itself.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import skein

from tfyarn import protocol
from tfyarn.spec import JobSpec

if TYPE_CHECKING:
    from tfyarn.pyenv import PackedEnv

TAG = "tfyarn"
# skein's web UI renders its page list by reflection into java.util's HashMap entries, which
# Java 17 forbids unless opened; without this its overview page fails (HTTP 500) as soon as the
# AM adds the status page. Java 8 ignores the option, by the -XX flag before it.
# The AM's JVM serves a few RPCs a second on the nodes that train: the C1 compiler alone and the
# serial GC keep its JIT and GC threads off the training's cores (measured: benchmarks/ddp_overhead.py).
AM_JAVA_OPTIONS = (
    "-XX:+IgnoreUnrecognizedVMOptions --add-opens=java.base/java.util=ALL-UNNAMED "
    "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
)


@dataclass(frozen=True)
class PlanContext:
    """How containers find Python and tfyarn's code.

    ``python_env: local`` runs the submitting machine's interpreter, which
    works on a single node or a cluster with a shared install; ``packed``
    runs the interpreter of the packed environment that YARN unpacks in
    every container (tfyarn.pyenv).
    """

    python: str
    env_archive: str = ""  # python_env packed or an archive: its cached copy, localized as pyenv.ARCHIVE_DIR
    code_archive: str = ""  # --code: its cached archive, localized as pyenv.CODE_DIR
    kerberized: bool = False  # the web UI can tell users apart, so its ACL is enforced
    # What is shipped, as planned (scanned once): the submit uploads exactly these.
    shipped_env: PackedEnv | None = None
    shipped_code: PackedEnv | None = None

    @classmethod
    def for_spec(cls, spec: JobSpec) -> PlanContext:
        from tfyarn import pyenv  # reads local files only when shipping is asked for

        code_dir = pyenv.shipped_code_dir(spec.code, spec.python_env)  # shipped env: the cwd, unless home
        code = pyenv.planned_code(code_dir) if code_dir else None  # reads the dir, writes nothing
        code_archive = code.uri if code else ""
        if spec.python_env != "local":
            env = pyenv.planned(spec.python_env)
            return cls(
                python=pyenv.PYTHON_IN_ARCHIVE,
                env_archive=env.uri,
                code_archive=code_archive,
                shipped_env=env,
                shipped_code=code,
            )
        return cls(python=sys.executable, code_archive=code_archive, shipped_code=code)


def _script(ctx: PlanContext, module: str) -> str:
    return f"exec {shlex.quote(ctx.python)} -m {module}\n"


def plan(spec: JobSpec, ctx: PlanContext) -> skein.ApplicationSpec:
    """The YARN application that runs ``spec``."""
    # The user's --env never goes here: YARN writes these into the container's launch script
    # unquoted. It travels inside the encoded job spec, and the executor sets it (protocol.ENV_USER_ENV).
    common_env = {"PYTHONUNBUFFERED": "1"}
    from tfyarn.pyenv import ARCHIVE_DIR, CODE_DIR

    env_files = {ARCHIVE_DIR: skein.File(source=ctx.env_archive, type="archive")} if ctx.env_archive else {}
    files = {os.path.basename(f.rstrip("/")): skein.File(source=os.path.abspath(f)) for f in spec.files}
    files.update(env_files)
    if ctx.code_archive:
        files[CODE_DIR] = skein.File(source=ctx.code_archive, type="archive")
    job_env = {protocol.ENV_JOB: protocol.encode_env(spec.to_dict())}
    task_common_env = {**common_env, **job_env}  # the executor derives its task from it
    services = {
        role.name: skein.Service(
            resources=skein.Resources(memory=role.memory_mb, vcores=role.vcores, gpus=role.gpus),
            script=_script(ctx, "appmaster.executor"),
            instances=role.instances,
            max_restarts=0,
            # The tfyarn AM decides what a failed task means for the job.
            allow_failures=True,
            node_label=role.node_label or spec.node_label,
            env=task_common_env,
            files=files,
        )
        for role in spec.roles.values()
        if role.instances
    }
    master = skein.Master(
        resources=skein.Resources(memory=spec.am_container_mb, vcores=1),
        script=_script(ctx, "appmaster.am"),
        files=env_files,
        env={**common_env, **job_env, "JAVA_TOOL_OPTIONS": AM_JAVA_OPTIONS},
    )
    tags = [TAG, f"framework:{spec.framework}", *spec.tags]
    return skein.ApplicationSpec(
        name=spec.name,
        queue=spec.queue,
        tags=tags,
        master=master,
        services=services,
        max_attempts=spec.max_attempts,
        node_label=spec.node_label,
        acls=acls(spec, ctx),
    )


def acls(spec: JobSpec, ctx: PlanContext) -> skein.ACLs:
    """YARN view/modify ACLs: the owner plus whom the spec names.

    The web UI (the status page) follows view_acls on a Kerberized cluster;
    without Kerberos the ResourceManager's proxy cannot tell users apart, so
    an owner-only UI would lock everyone out: it stays open there, as YARN's
    own pages are. The page carries no secrets either way.
    """
    ui = list(spec.view_acls) if ctx.kerberized else ["*"]
    return skein.ACLs(enable=True, view_users=list(spec.view_acls), modify_users=list(spec.modify_acls), ui_users=ui)
