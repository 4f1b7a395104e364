"""The typed job spec: what a user asks for, validated before anything happens.

A spec is plain data. It round-trips through a dict (YAML/JSON) with strict
validation: unknown keys are errors that name the key, and every
cross-field check names the field it is about. Nothing here talks to a
cluster; ``tfyarn.plan`` turns a valid spec into a YARN application.
"""

from __future__ import annotations

import re
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any

from tfyarn import frameworks
from tfyarn.docker import check_docker, check_image
from tfyarn.errors import SpecError
from tfyarn.fields import (
    MAX_MEMORY_MB,
    MIN_MEMORY_MB,
    check_env,
    check_files,
    check_int,
    check_keys,
    check_output_mode,
    check_tags,
    check_text,
    check_tuple,
    list_of,
    parse_duration,
    parse_memory,
    show,
    str_list,
)
from tfyarn.iospec import INPUT_MODES, InputSpec, OutputSpec, split_pair

__all__ = ["INPUT_MODES", "JobSpec", "RoleSpec", "InputSpec", "OutputSpec", "parse_memory", "show", "split_pair"]

RESTART_POLICIES = ("never", "on-failure", "all")  # see RoleSpec.restart_policy
PYTHON_ENVS = ("auto", "local", "packed")  # see tfyarn.envchoice, tfyarn.plan.PlanContext and tfyarn.pyenv
PLACEMENTS = ("yarn", "spread", "pack")  # see tfyarn.placement
NO_PROGRESS_ROLES = ("ps", "evaluator")  # the job's progress_timeout_s skips them (JobSpec.progress_timeout_for)
_HOST_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,252}")
_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,62}")  # role names: also YARN service names


def _role_where(name: Any) -> str:
    """``roles.worker``; a name that is no role name is quoted, so the message stays one line."""
    return f"roles.{name}" if isinstance(name, str) and _NAME_RE.fullmatch(name) else f"roles.{show(name)}"


def _sub(cls: Any, data: Any, where: str) -> Any:
    """An InputSpec/OutputSpec from a mapping (or from the "SRC:DEST" short form)."""
    if isinstance(data, str):
        if cls is InputSpec:  # REMOTE[:LOCAL]
            src, dest = split_pair(data)
        else:  # LOCAL:REMOTE
            src, sep, dest = data.partition(":")
            if not sep:
                raise SpecError(f"{where}: {show(data)} is not LOCAL_DIR:URI, e.g. ./model:hdfs:///models/run1")
        data = {"src": src, "dest": dest}
    if not isinstance(data, dict):
        raise SpecError(f"{where}: expected a mapping or SRC:DEST, got {show(data)}")
    check_keys(data, cls, where)
    try:
        return cls(**data)
    except TypeError:
        missing = [f.name for f in fields(cls) if f.name not in data]
        raise SpecError(f"{where}: missing key(s) {', '.join(missing)}") from None


TENSORBOARD_AM_MEMORY_MB = 512  # added to the AM container when it also runs TensorBoard
ELASTIC_AM_MEMORY_MB = 768  # added when the AM hosts an elastic job's rendezvous store (a torch process)


@dataclass(frozen=True)
class RoleSpec:
    """One kind of task (``worker``, ``ps`` ...) and the containers it runs in."""

    name: str
    instances: int = 1
    memory_mb: int = 2048
    vcores: int = 1
    gpus: int = 0
    node_label: str = ""
    command: tuple[str, ...] = ()  # empty: the role's default command (see JobSpec.command_for)
    nproc_per_node: int = 0  # pytorch workers: processes per container; 0 = its GPU count, or 1 (frameworks.pytorch)
    # When a task of this role fails: never (the job fails), on-failure (restart that task in a
    # new container, which rejoins: ps-strategy workers), all (restart every task with a fresh
    # rendezvous: DDP, multi-worker collectives). At most max_restarts times per task (per job
    # for `all`), waiting restart_backoff_s, doubled each time; exit codes listed in
    # permanent_exit_codes are never retried.
    restart_policy: str = "never"
    max_restarts: int = 3
    restart_backoff_s: int = 2
    permanent_exit_codes: tuple[int, ...] = ()
    docker_image: str = ""  # this role's tasks run in this image; "": the job's docker_image (if any)
    progress_timeout_s: int = 0  # the hang watchdog for this role's tasks; 0: the job's (see JobSpec)
    # Elastic (pytorch workers, torchrun's --nnodes MIN:MAX): training starts once this many have
    # registered and goes on with anywhere from this many to `instances`; late containers join at
    # the next rendezvous round, lost ones are replaced alone (restart_policy on-failure) or not
    # (never). 0: not elastic, the whole gang starts together.
    min_instances: int = 0
    below_min_timeout_s: int = 300  # elastic: the job fails when fewer than min_instances train this long

    @property
    def elastic(self) -> bool:
        return self.min_instances > 0

    def validate(self) -> None:
        where = _role_where(self.name)
        if not isinstance(self.name, str) or not _NAME_RE.fullmatch(self.name):
            raise SpecError(f"{where}: role names start with a letter and use up to 63 letters, digits, _ and -")
        check_int(self.instances, f"{where}.instances", 0)
        check_int(self.nproc_per_node, f"{where}.nproc_per_node", 0)
        check_text(self.node_label, f"{where}.node_label")
        for i, arg in enumerate(check_tuple(self.command, f"{where}.command")):
            check_text(arg, f"{where}.command[{i}]", multiline=True)
        check_int(self.memory_mb, f"{where}.memory_mb", MIN_MEMORY_MB, MAX_MEMORY_MB)
        check_int(self.vcores, f"{where}.vcores", 1)
        check_int(self.gpus, f"{where}.gpus", 0)
        if self.restart_policy not in RESTART_POLICIES:
            raise SpecError(
                f"{where}.restart_policy: {show(self.restart_policy)} is not one of {', '.join(RESTART_POLICIES)}"
            )
        check_int(self.max_restarts, f"{where}.max_restarts", 0)
        check_int(self.restart_backoff_s, f"{where}.restart_backoff_s", 0)
        check_image(self.docker_image, f"{where}.docker_image")
        check_int(self.progress_timeout_s, f"{where}.progress_timeout_s", 0)
        check_int(self.min_instances, f"{where}.min_instances", 0)
        check_int(self.below_min_timeout_s, f"{where}.below_min_timeout_s", 1)
        if self.min_instances > self.instances:
            raise SpecError(
                f"{where}.min_instances: {self.min_instances} is more than instances ({self.instances}); "
                "give MIN:MAX with MIN <= MAX, e.g. --num-workers 2:4"
            )
        if self.elastic and self.restart_policy == "all":
            raise SpecError(
                f"{where}.restart_policy: elastic workers are replaced one at a time (on-failure) or not at "
                "all (never); torchrun re-forms the group itself, so `all` does not apply"
            )
        for code in self.permanent_exit_codes:
            if isinstance(code, bool) or not isinstance(code, int) or not 0 < code < 256:
                raise SpecError(f"{where}.permanent_exit_codes: {show(code)} is not an exit code (1-255)")

    @classmethod
    def from_dict(cls, name: str, data: dict[str, Any]) -> RoleSpec:
        where = _role_where(name)
        if not isinstance(data, dict):
            raise SpecError(f"{where}: expected a mapping, got {type(data).__name__}")
        if "name" in data and data["name"] != name:
            raise SpecError(
                f"{where}.name: a role's name is its key under roles; remove name: "
                f"{show(data['name'])}, or rename the key"
            )
        check_keys({**data, "name": name}, cls, where)
        values = dict(data)
        if "memory_mb" in values:
            values["memory_mb"] = parse_memory(values["memory_mb"], f"roles.{name}.memory_mb")
        values["command"] = str_list(values.get("command", ()), f"roles.{name}.command")
        for duration in ("progress_timeout_s", "below_min_timeout_s"):
            if duration in values:
                values[duration] = parse_duration(values[duration], f"roles.{name}.{duration}")
        codes = values.get("permanent_exit_codes", ()) or ()
        if isinstance(codes, (int, str)) and not isinstance(codes, bool):
            codes = [codes]
        if not isinstance(codes, (list, tuple)):
            raise SpecError(f"roles.{name}.permanent_exit_codes: expected a list of exit codes")
        try:
            values["permanent_exit_codes"] = tuple(int(c) if isinstance(c, str) else c for c in codes)
        except ValueError:
            raise SpecError(f"roles.{name}.permanent_exit_codes: {show(codes)} are not exit codes") from None
        role = cls(name=name, **{k: v for k, v in values.items() if k != "name"})
        role.validate()
        return role


_USER_RE = re.compile(r"[A-Za-z0-9_.@$-]+")


@dataclass(frozen=True)
class JobSpec:
    """A whole job: its roles, the user command, and where it runs."""

    name: str
    command: tuple[str, ...]
    roles: dict[str, RoleSpec] = field(default_factory=dict)
    framework: str = "none"
    queue: str = "default"
    node_label: str = ""
    env: dict[str, str] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    files: tuple[str, ...] = ()  # local paths, localized into every task's working dir by basename
    python_env: str = "auto"  # auto | local | packed | path of an environment archive (tfyarn.envchoice)
    code: str = ""  # a local dir shipped to every task's working dir (packed, cached by content)
    am_memory_mb: int = 768
    max_attempts: int = 1
    evaluator_may_fail: bool = True  # tensorflow: a failed evaluator does not fail the job
    inputs: tuple[InputSpec, ...] = ()
    outputs: tuple[OutputSpec, ...] = ()
    overwrite: bool = False  # outputs may replace what exists at their destination
    # Published outputs and snapshots: dirs get this mode, files the same less x (owner only by
    # default); view_acls and modify_acls users also get read access on HDFS (an ACL entry each).
    output_mode: str = "700"
    save_every: int = 0  # seconds between mid-run output snapshots; 0 = only on `tfyarn save`
    resume: bool = True  # a restarted output task first gets this job's latest snapshot into its output dirs
    download_threads: int = 10  # per container (XLearning's download.thread.nums)
    upload_threads: int = 10
    tensorboard: bool = False  # the AM runs TensorBoard on the tasks' $TFYARN_TENSORBOARD_DIR summaries
    allocation_timeout_s: int = 300  # every container allocated within this, or the job fails (gang)
    registration_timeout_s: int = 900  # each task registered (inputs staged) this long after allocation
    max_runtime_s: int = 0  # the job fails, everything stopped, this long after submission; 0 = no limit
    # A task that shows no progress (tfyarn.report calls, else output) this long is stopped and fails,
    # and its restart policy applies; every role but ps and evaluator (a role's own setting wins); 0 = off.
    progress_timeout_s: int = 0
    view_acls: tuple[str, ...] = ()  # users besides the owner who may view the job (YARN ACL)
    modify_acls: tuple[str, ...] = ()  # users besides the owner who may kill it
    on_event: str = ""  # a /bin/sh command the AM runs per job event, its JSON on stdin (appmaster.am.events)
    placement: str = "yarn"  # yarn (YARN's choice) | spread (a role's tasks on distinct nodes) | pack
    exclude_nodes: tuple[str, ...] = ()  # hosts (as the RM names them) no task of the job may run on
    # Every task's command runs in this image (a role's docker_image wins); tfyarn.docker has the rest.
    docker_image: str = ""
    docker_runtime: str = "auto"  # auto | executor (`docker run` by the executor) | yarn (YARN's Docker runtime)
    docker_mounts: tuple[str, ...] = ()  # SRC:DST[:ro], besides the task's own dir
    docker_env: dict[str, str] = field(default_factory=dict)  # set inside the image only

    def progress_timeout_for(self, role: str) -> int:
        """Seconds without progress after which a ``role`` task is stopped; 0: never.

        A parameter server serves and an evaluator waits for checkpoints: neither
        shows training progress, so they get the job's setting only by their own.
        """
        own = self.roles[role].progress_timeout_s
        return own or (0 if role in NO_PROGRESS_ROLES else self.progress_timeout_s)

    def image_for(self, role: str) -> str:
        """The image ``role``'s tasks run in; "" runs them on the node, as without Docker."""
        return self.roles[role].docker_image or self.docker_image

    @property
    def output_readers(self) -> tuple[str, ...]:
        """Who besides the owner may read the job's outputs: its view and modify users, each once."""
        return tuple(dict.fromkeys((*self.view_acls, *self.modify_acls)))

    def validate(self) -> JobSpec:
        """Raise SpecError naming the first field that is wrong; return self."""
        for key in ("name", "framework", "queue", "node_label", "python_env", "code", "placement"):
            check_text(getattr(self, key), key)
        for i, arg in enumerate(check_tuple(self.command, "command")):
            check_text(arg, f"command[{i}]", multiline=True)
        check_text(self.on_event, "on_event", multiline=True)
        check_tags(self.tags)
        if not isinstance(self.evaluator_may_fail, bool):
            raise SpecError(f"evaluator_may_fail: expected true or false, got {show(self.evaluator_may_fail)}")
        if not self.name.strip():
            raise SpecError("name: must not be empty")
        if self.framework not in frameworks.NAMES:
            raise SpecError(f"framework: {show(self.framework)} is not one of {', '.join(frameworks.NAMES)}")
        if self.python_env not in PYTHON_ENVS and not self.python_env.endswith((".tar.gz", ".tgz", ".zip")):
            raise SpecError(
                f"python_env: {show(self.python_env)} is not one of {', '.join(PYTHON_ENVS)}, "
                "nor a .tar.gz/.tgz/.zip environment archive"
            )
        if not self.roles:
            raise SpecError("roles: a job needs at least one role")
        for name, role in self.roles.items():
            if name != role.name:
                raise SpecError(f"{_role_where(name)}: key and role name {show(role.name)} differ")
            role.validate()
            if role.elastic and (self.framework != "pytorch" or name != "worker"):
                raise SpecError(
                    f"{_role_where(name)}.min_instances: only pytorch workers are elastic (torchrun's "
                    "--nnodes MIN:MAX); use --framework pytorch, or give --num-workers a single count"
                )
        frameworks.get(self.framework).validate(self)
        if self.num_tasks < 1:
            raise SpecError("roles: the job has no task; give some role at least one instance")
        for name in self.roles:
            if self.roles[name].instances and not self.command_for(name):
                raise SpecError(
                    "command: no command given; put it after `--`, e.g. "
                    "tfyarn submit --num-workers 2 -- python train.py"
                )
        check_env(self.env)
        check_files(self.files)
        check_int(self.am_memory_mb, "am_memory_mb", MIN_MEMORY_MB, MAX_MEMORY_MB)
        check_int(self.download_threads, "download_threads", 1)
        check_int(self.save_every, "save_every", 0)
        if self.save_every and not self.outputs:
            raise SpecError("save_every: snapshots need an output (--output DIR:URI)")
        check_int(self.upload_threads, "upload_threads", 1)
        for key in ("overwrite", "tensorboard", "resume"):
            if not isinstance(getattr(self, key), bool):
                raise SpecError(f"{key}: expected true or false, got {show(getattr(self, key))}")
        check_output_mode(self.output_mode)
        check_docker(
            self.docker_image, self.docker_runtime, check_tuple(self.docker_mounts, "docker_mounts"), self.docker_env
        )
        for i, inp in enumerate(self.inputs):
            inp.validate(f"inputs[{i}]")
        for i, out in enumerate(self.outputs):
            out.validate(f"outputs[{i}]")
            out_role, _, index = self.output_task(out).partition(":")  # index: at most 9 digits
            if self.count(out_role) <= int(index):
                raise SpecError(f"outputs[{i}].task: the job has no task {self.output_task(out)}")
        check_int(self.max_attempts, "max_attempts", 1)
        check_int(self.allocation_timeout_s, "allocation_timeout_s", 1)
        check_int(self.registration_timeout_s, "registration_timeout_s", 1)
        check_int(self.max_runtime_s, "max_runtime_s", 0)
        check_int(self.progress_timeout_s, "progress_timeout_s", 0)
        for key in ("view_acls", "modify_acls"):
            for user in check_tuple(getattr(self, key), key):
                if user != "*" and not (isinstance(user, str) and _USER_RE.fullmatch(user)):
                    raise SpecError(f"{key}: {show(user)} is not a user name (or *)")
        if self.placement not in PLACEMENTS:
            raise SpecError(f"placement: {show(self.placement)} is not one of {', '.join(PLACEMENTS)}")
        for host in check_tuple(self.exclude_nodes, "exclude_nodes"):
            if not (isinstance(host, str) and _HOST_RE.fullmatch(host)):
                raise SpecError(f"exclude_nodes: {show(host)} is not a host name (as `tfyarn cluster status` lists it)")
        if self.labels and (self.placement != "yarn" or self.exclude_nodes):
            key = "placement" if self.placement != "yarn" else "exclude_nodes"
            raise SpecError(
                f"{key}: tfyarn places tasks by host, and YARN takes no node label with a host "
                f"(node label {', '.join(self.labels)}); drop the node label or the {key.replace('_', '-')}"
            )
        return self

    @property
    def labels(self) -> tuple[str, ...]:
        """The node label expressions the job's containers ask for (the AM's included), each once."""
        asked = [self.node_label, *(r.node_label for r in self.roles.values() if r.instances)]
        return tuple(sorted({label for label in asked if label}))

    def label_of(self, role: str) -> str:
        """The node label ``role``'s containers ask for ("" for none)."""
        return self.roles[role].node_label or self.node_label

    @property
    def am_container_mb(self) -> int:
        """The AM container's memory: its own, plus TensorBoard's and the rendezvous store's when it runs them."""
        return (
            self.am_memory_mb
            + (TENSORBOARD_AM_MEMORY_MB if self.tensorboard else 0)
            + (ELASTIC_AM_MEMORY_MB if self.elastic_role else 0)
        )

    @property
    def elastic_role(self) -> RoleSpec | None:
        """The elastic role (pytorch's workers), if the job has one."""
        return next((r for r in self.roles.values() if r.elastic and r.instances), None)

    @property
    def num_tasks(self) -> int:
        return sum(r.instances for r in self.roles.values())

    def count(self, role: str) -> int:
        r = self.roles.get(role)
        return r.instances if r else 0

    def command_for(self, role: str) -> tuple[str, ...]:
        """What a role's tasks run: its own command, the framework default, or the job's."""
        return self.roles[role].command or frameworks.get(self.framework).default_command(self, role) or self.command

    def output_task(self, out: OutputSpec) -> str:
        """The task that uploads ``out``: as given, else the chief, else worker 0."""
        return out.task or ("chief:0" if self.count("chief") else "worker:0")

    def required_roles(self) -> frozenset[str]:
        """Roles whose every task must exit 0 for the job to succeed."""
        return frameworks.get(self.framework).required_roles(self)

    def tolerated_roles(self) -> frozenset[str]:
        """Roles whose failure does not fail the job."""
        return frameworks.get(self.framework).tolerated_roles(self)

    # -- (de)serialisation ---------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["command"] = list(self.command)
        d["tags"] = list(self.tags)
        d["files"] = list(self.files)
        d["view_acls"], d["modify_acls"] = list(self.view_acls), list(self.modify_acls)
        d["exclude_nodes"] = list(self.exclude_nodes)
        d["inputs"] = [asdict(i) for i in self.inputs]
        d["outputs"] = [asdict(o) for o in self.outputs]
        d["roles"] = {
            n: {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(r).items() if k != "name"}
            for n, r in self.roles.items()
        }
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobSpec:
        if not isinstance(data, dict):
            raise SpecError(f"job spec: expected a mapping, got {type(data).__name__}")
        check_keys(data, cls, "job spec")
        values = dict(data)
        roles = values.pop("roles", {}) or {}
        if not isinstance(roles, dict):
            raise SpecError("roles: expected a mapping of role name to role settings")
        values["roles"] = {n: RoleSpec.from_dict(n, {} if r is None else r) for n, r in roles.items()}
        values["command"] = str_list(values.get("command", ()), "command")
        for key in ("max_runtime_s", "progress_timeout_s"):  # seconds, or a duration such as 2h, 1h30m
            if key in values:
                values[key] = parse_duration(values[key], key)
        values["tags"] = str_list(values.get("tags", ()), "tags")
        values["files"] = str_list(values.get("files", ()), "files")
        for key in ("view_acls", "modify_acls", "exclude_nodes", "docker_mounts"):
            values[key] = str_list(values.get(key, ()), key)
        values["inputs"] = tuple(_sub(InputSpec, x, f"inputs[{i}]") for i, x in enumerate(list_of(values, "inputs")))
        values["outputs"] = tuple(
            _sub(OutputSpec, x, f"outputs[{i}]") for i, x in enumerate(list_of(values, "outputs"))
        )
        if isinstance(values.get("output_mode"), int) and not isinstance(values["output_mode"], bool):
            values["output_mode"] = str(values["output_mode"])  # YAML's 750 (an int): the digits as written
        if "am_memory_mb" in values:
            values["am_memory_mb"] = parse_memory(values["am_memory_mb"], "am_memory_mb")
        for key in ("env", "docker_env"):
            env = values.get(key, {}) or {}
            if not isinstance(env, dict):
                raise SpecError(f"{key}: expected a mapping of NAME: value")
            values[key] = dict(env)
        if "name" not in values:
            raise SpecError("name: missing")
        return cls(**values).validate()


def spec_default(key: str) -> Any:
    """The job spec's default for a job key ("queue") or a role's ("roles.worker.memory_mb")."""
    cls, name = (RoleSpec, key.rsplit(".", 1)[-1]) if key.startswith("roles.") else (JobSpec, key)
    spec_field = {f.name: f for f in fields(cls)}[name]
    if spec_field.default is not MISSING:
        return spec_field.default
    if spec_field.default_factory is not MISSING:
        return spec_field.default_factory()
    raise LookupError(f"{key} has no default in the job spec")
