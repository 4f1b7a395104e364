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
from pathlib import Path
from typing import TYPE_CHECKING

import skein

from tfyarn import docker, envchoice, placement, protocol, scripts
from tfyarn.spec import JobSpec, RoleSpec

if TYPE_CHECKING:
    from tfyarn.envchoice import EnvChoice
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
class Renewal:
    """Submitted with --principal/--keytab on a Kerberized cluster: the AM keeps the job's HDFS
    delegation token valid past its max lifetime with this keytab (appmaster.renewal), which is
    localized into the AM's container only."""

    principal: str
    keytab: str
    webhdfs: tuple[str, ...]  # the default filesystem's NameNode web addresses (HA: each)
    ca_file: str = ""  # a private CA those speak HTTPS under ($TFYARN_CA_FILE), else the system's


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
    owner: str = ""  # who submits, as the cluster names them (a Kerberized cluster: the principal's short name)
    # The job's allowed nodes as the RM names them (its RUNNING nodes at submit, less exclude_nodes):
    # each gets a <role>@<host> service per role (tfyarn.placement). Empty: the RM was not asked.
    nodes: tuple[str, ...] = ()
    renewal: Renewal | None = None
    # What is shipped, as planned (scanned once): the submit uploads exactly these.
    shipped_env: PackedEnv | None = None
    shipped_code: PackedEnv | None = None

    # How python_env auto resolved (None: the spec named one), for the submit to say.
    env_choice: EnvChoice | None = None
    # How tasks with a Docker image run (tfyarn.docker): executor | yarn; auto resolved from the config.
    docker_runtime: str = "executor"

    @classmethod
    def for_spec(cls, spec: JobSpec, conf_dir: Path | None = None) -> PlanContext:
        """``conf_dir``: the target cluster's config, which ``python_env: auto`` looks at (None: unknown)."""
        from tfyarn import pyenv  # reads local files only when shipping is asked for

        runtime = _docker_runtime(spec, conf_dir)
        choice = envchoice.choose(conf_dir) if spec.python_env == envchoice.AUTO else None
        python_env = choice.python_env if choice else spec.python_env
        code_dir = pyenv.shipped_code_dir(spec.code, python_env)  # shipped env: the cwd, unless home
        code = pyenv.planned_code(code_dir) if code_dir else None  # reads the dir, writes nothing
        scripts.check_shipped(spec, code_dir)
        code_archive = code.uri if code else ""
        if python_env != "local":
            env = pyenv.planned(python_env)
            return cls(
                python=pyenv.PYTHON_IN_ARCHIVE,
                env_archive=env.uri,
                code_archive=code_archive,
                shipped_env=env,
                shipped_code=code,
                env_choice=choice,
                docker_runtime=runtime,
            )
        return cls(
            python=sys.executable,
            code_archive=code_archive,
            shipped_code=code,
            env_choice=choice,
            docker_runtime=runtime,
        )


def _docker_runtime(spec: JobSpec, conf_dir: Path | None) -> str:
    """The spec's docker_runtime, ``auto`` resolved from the cluster's yarn-site (when it is known)."""
    if spec.docker_runtime != "auto" or not any(spec.image_for(r) for r in spec.roles):
        return spec.docker_runtime if spec.docker_runtime != "auto" else "executor"
    from tfyarn import hadoopconf

    return docker.resolve_runtime("auto", hadoopconf.load(conf_dir).props if conf_dir else None)


def _script(ctx: PlanContext, module: str, log_as: str = "", python: str = "") -> str:
    """The container's script; ``log_as``: write the log as <role>.log, where every reader looks for it
    (skein names it after the service, and a <role>@<host> service is still the role's)."""
    redirect = f'exec >>"${{LOG_DIRS%%,*}}/{log_as}.log" 2>&1\n' if log_as else ""
    return f"{redirect}exec {shlex.quote(python or ctx.python)} -m {module}\n"


def plan(spec: JobSpec, ctx: PlanContext) -> skein.ApplicationSpec:
    """The YARN application that runs ``spec``."""
    common_env = {"PYTHONUNBUFFERED": "1"}
    from tfyarn.pyenv import ARCHIVE_DIR

    env_files = {ARCHIVE_DIR: skein.File(source=ctx.env_archive, type="archive")} if ctx.env_archive else {}
    job_env = {protocol.ENV_JOB: protocol.encode_env(spec.to_dict())}
    # YARN places the first containers (skein asks for them before the AM script starts) unless
    # the job places them itself: then the AM asks from the <role>@<host> services.
    yarn_places = spec.placement == placement.YARN
    # A node label goes with YARN's placement only: YARN takes no label on a request for a host.
    # Under YARN's placement the <role>@<host> services serve only restarts (placed away from a lost
    # node): a job that never restarts a task goes without them, and skein submits it faster
    # (12 empty services of a 4-task job on 4 nodes: about 0.7 s of the submit).
    restarts = any(r.restart_policy != "never" for r in spec.roles.values())
    per_node = (
        bool(ctx.nodes)
        and not spec.labels
        and ((len(ctx.nodes) > 1 and restarts) or bool(spec.exclude_nodes) or not yarn_places)
    )
    services = {}
    for role in spec.roles.values():
        if not role.instances:
            continue
        allowed = ctx.nodes if spec.exclude_nodes else ()
        services[role.name] = _service(spec, role, ctx, job_env, role.instances if yarn_places else 0, allowed)
        if per_node:
            for host in ctx.nodes:
                name = placement.node_service(role.name, host)
                services[name] = _service(spec, role, ctx, job_env, 0, (host,), log_as=role.name)
    master = skein.Master(
        resources=skein.Resources(memory=spec.am_container_mb, vcores=1),
        script=_script(ctx, "appmaster.am"),
        files={**env_files, **_renewal_files(ctx.renewal)},
        env={
            **common_env,
            **job_env,
            "JAVA_TOOL_OPTIONS": AM_JAVA_OPTIONS,
            **({protocol.ENV_NODE_HOSTS: ",".join(ctx.nodes)} if per_node else {}),
            **_renewal_env(ctx.renewal),
        },
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
        file_systems=other_filesystems(spec),
    )


def renewal_for(conf_dir: Path) -> Renewal | None:
    """With --principal/--keytab (protocol.ENV_PRINCIPAL/ENV_KEYTAB) on a cluster whose default
    filesystem is HDFS, the AM renews the job's HDFS token past its max lifetime. Reads config only."""
    from tfyarn import hadoop_env

    principal, keytab = os.environ.get(protocol.ENV_PRINCIPAL), os.environ.get(protocol.ENV_KEYTAB)
    if not (principal and keytab):
        return None
    webs = hadoop_env.namenode_webs(conf_dir)
    return Renewal(principal, keytab, tuple(webs), os.environ.get(protocol.ENV_CA_FILE, "")) if webs else None


def _renewal_files(renewal: Renewal | None) -> dict[str, skein.File]:
    return {protocol.RENEW_KEYTAB_FILE: skein.File(source=os.path.abspath(renewal.keytab))} if renewal else {}


def _renewal_env(renewal: Renewal | None) -> dict[str, str]:
    if renewal is None:
        return {}
    env = {protocol.ENV_RENEW_PRINCIPAL: renewal.principal, protocol.ENV_RENEW_WEBHDFS: ",".join(renewal.webhdfs)}
    return {**env, protocol.ENV_CA_FILE: renewal.ca_file} if renewal.ca_file else env


def other_filesystems(spec: JobSpec) -> list[str]:
    """The filesystems besides the default one that the job's inputs and outputs name (another
    NameNode, a nameservice, a viewfs mount table): skein gets a delegation token for each at
    submit, as it does for the default one, so the containers can reach them on a Kerberized cluster."""
    from tfyarn.storage.uri import parse_uri

    uris = [parse_uri(i.src) for i in spec.inputs] + [parse_uri(o.dest) for o in spec.outputs]
    return sorted({f"{u.scheme}://{u.authority}" for u in uris if u.remote and u.authority})


def _service(
    spec: JobSpec,
    role: RoleSpec,
    ctx: PlanContext,
    job_env: dict[str, str],
    instances: int,
    nodes: tuple[str, ...],
    log_as: str = "",
) -> skein.Service:
    """One service of ``role``'s tasks; ``nodes``: only these hosts (else any)."""
    from tfyarn.pyenv import ARCHIVE_DIR, CODE_DIR

    files = {os.path.basename(f.rstrip("/")): skein.File(source=os.path.abspath(f)) for f in spec.files}
    if ctx.env_archive:
        files[ARCHIVE_DIR] = skein.File(source=ctx.env_archive, type="archive")
    if ctx.code_archive:
        files[CODE_DIR] = skein.File(source=ctx.code_archive, type="archive")
    # The user's --env never goes here: YARN writes these into the container's launch script
    # unquoted. It travels inside the encoded job spec, and the executor sets it (protocol.ENV_USER_ENV).
    env = {"PYTHONUNBUFFERED": "1", **job_env}
    image, python = spec.image_for(role.name), ""
    if image:
        env[protocol.ENV_DOCKER_RUNTIME] = ctx.docker_runtime
        if ctx.docker_runtime == "yarn":  # the whole container runs in the image: its python, its tfyarn
            env.update(docker.yarn_runtime_env(image, spec.docker_mounts))
            python = "python"
    return skein.Service(
        resources=skein.Resources(memory=role.memory_mb, vcores=role.vcores, gpus=role.gpus),
        script=_script(ctx, "appmaster.executor", log_as, python),
        instances=instances,
        max_restarts=0,
        allow_failures=True,  # the tfyarn AM decides what a failed task means for the job
        node_label=spec.label_of(role.name),
        nodes=list(nodes),
        relax_locality=False,  # with nodes: only those; without (as before): any node
        env=env,  # the executor derives its task from the job spec and its container id
        files=files,
    )


def acls(spec: JobSpec, ctx: PlanContext) -> skein.ACLs:
    """YARN view/modify ACLs: the owner plus whom the spec names.

    The web UI (the status page) follows view_acls on a Kerberized cluster;
    without Kerberos the ResourceManager's proxy cannot tell users apart, so
    an owner-only UI would lock everyone out: it stays open there, as YARN's
    own pages are. The page carries no secrets either way.
    """
    # skein lets the AM's own user in; under YARN's DefaultContainerExecutor that is the NodeManager's
    # OS user, not the owner, so the owner is named too.
    ui = [*([ctx.owner] if ctx.owner else []), *spec.view_acls] if ctx.kerberized else ["*"]
    return skein.ACLs(enable=True, view_users=list(spec.view_acls), modify_users=list(spec.modify_acls), ui_users=ui)
