"""A job's spec from its layers: the user's defaults file, a YAML job file, flags, then ``--set key=value``.

Every flag is one job-spec key (``FLAG_KEYS``), so a job can be written as
flags, as YAML (conf/job.yaml documents every key), or both; an error names
the key and the flag that sets it.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path
from typing import Any

import yaml

from tfyarn import protocol
from tfyarn.errors import SpecError
from tfyarn.frameworks import KNOWN_ROLES as ROLES
from tfyarn.spec import JobSpec, show, split_pair

# job-spec key (dotted) -> the flag that sets it
FLAG_KEYS: dict[str, str] = {
    "name": "--name",
    "framework": "--framework",
    "queue": "--queue",
    "node_label": "--node-label",
    "env": "--env",
    "files": "--file",
    "tags": "--tag",
    "am_memory_mb": "--am-memory",
    "max_attempts": "--max-attempts",
    "evaluator_may_fail": "--evaluator-may-fail",
    "inputs": "--input",
    "outputs": "--output",
    "overwrite": "--overwrite",
    "output_mode": "--output-mode",
    "download_threads": "--download-threads",
    "upload_threads": "--upload-threads",
    "python_env": "--python-env",
    "save_every": "--save-every",
    "resume": "--resume",
    "code": "--code",
    "tensorboard": "--tensorboard",
    "allocation_timeout_s": "--allocation-timeout",
    "registration_timeout_s": "--registration-timeout",
    "max_runtime_s": "--max-runtime",
    "progress_timeout_s": "--progress-timeout",
    "view_acls": "--view-acl",
    "modify_acls": "--modify-acl",
    "on_event": "--on-event",
    "placement": "--placement",
    "exclude_nodes": "--exclude-node",
    "docker_image": "--docker-image",
    "docker_runtime": "--docker-runtime",
    "docker_mounts": "--docker-mount",
    "docker_env": "--docker-env",
    "roles.worker.instances": "--num-workers",
    "roles.ps.instances": "--num-ps",
    "roles.chief.instances": "--chief",
    "roles.evaluator.instances": "--evaluator",
    "roles.worker.nproc_per_node": "--nproc-per-node",
    **{
        f"roles.{r}.{k}": f"--{r}-{f}"
        for r in ROLES
        for k, f in (
            ("memory_mb", "memory"),
            ("vcores", "vcores"),
            ("gpus", "gpus"),
            ("node_label", "node-label"),
            ("restart_policy", "restart"),
            ("max_restarts", "max-restarts"),
            ("restart_backoff_s", "restart-backoff"),
            ("permanent_exit_codes", "permanent-exit-codes"),
            ("docker_image", "docker-image"),
            ("progress_timeout_s", "progress-timeout"),
        )
    },
}
_PARAM_KEYS = {flag.lstrip("-").replace("-", "_"): key for key, flag in FLAG_KEYS.items()}
_PARAM_KEYS.update(
    {
        "file": "files",
        "tag": "tags",
        "input": "inputs",
        "output": "outputs",
        "view_acl": "view_acls",
        "modify_acl": "modify_acls",
        "exclude_node": "exclude_nodes",
        "docker_mount": "docker_mounts",
    }
)
# list keys whose flags add to what the YAML file already has
_APPENDED = ("file", "tag", "input", "output", "view_acl", "modify_acl", "exclude_node", "docker_mount")


def set_path(doc: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    if not all(p.strip() for p in (*parents, last)):
        raise SpecError(f"--set {dotted!r} is not a dotted key such as roles.worker.instances")
    node = doc
    for part in parents:
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict):
            raise SpecError(f"{dotted}: {part!r} is not a mapping")
        node = child
    node[last] = value


def parse_yaml(text: str, where: str) -> Any:
    """YAML's safe subset; every way it can fail (python tags, a 5000-digit int, deep nesting) is a SpecError."""
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as e:  # its first line is the context ("while parsing ..."), not the problem
        mark = e.problem_mark
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise SpecError(f"{where}: not valid YAML: {e.problem or e.context}{at}") from None
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise SpecError(f"{where}: not valid YAML: {first}") from None


def read_conf_text(path: Path) -> str:
    """The job file's text; a FIFO or device is refused, not read (reading one may block forever)."""
    try:
        if not path.is_file():
            raise SpecError(f"--conf: {str(path)!r} is not a regular file; give a YAML job file")
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise SpecError(f"--conf: {str(path)!r} is not UTF-8 text (byte {e.start}); save it as UTF-8") from None
    except OSError as e:
        raise SpecError(f"--conf: cannot read {str(path)!r}: {e.strerror or e}") from None


def load_conf(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    doc = parse_yaml(read_conf_text(path), str(path))
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise SpecError(f"{path}: expected a mapping of job-spec keys, got {type(doc).__name__}")
    return doc


def defaults_path() -> Path:
    """The per-user defaults file: $TFYARN_DEFAULTS, else $XDG_CONFIG_HOME (or ~/.config)/tfyarn/defaults.yaml."""
    given = os.environ.get(protocol.ENV_DEFAULTS)
    if given:
        return Path(given)
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "tfyarn" / "defaults.yaml"


def load_defaults() -> dict[str, Any]:
    """The defaults file's job-spec keys ({} when there is none); one named by $TFYARN_DEFAULTS must exist."""
    path = defaults_path()
    if not path.exists() and not os.environ.get(protocol.ENV_DEFAULTS):
        return {}
    if not path.is_file():
        raise SpecError(
            f"{protocol.ENV_DEFAULTS}: {str(path)!r} is not a regular file; point it at a YAML file of "
            "job-spec keys (conf/job.yaml), or unset it"
        )
    try:
        return load_conf(path)
    except SpecError as e:
        raise SpecError(f"defaults file {str(e).removeprefix('--conf: ')}") from None


def merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``: mappings merge key by key, anything else (lists too) is replaced."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def reworded(err: SpecError, flagged: dict[str, str]) -> SpecError:
    """A SpecError about a key that a flag set names the flag; other keys get their flag as a hint.

    The message is made one line: a key or path a user typed may hold a newline or escape code.
    """
    key, sep, rest = one_line(str(err)).partition(": ")
    if not sep:
        return SpecError(key)
    for k in (key, key.split("[")[0]):  # inputs[0].src -> inputs
        if k in flagged:
            return SpecError(f"{flagged[k]}: {rest}")
    head, dot, tail = key.partition(".")
    if dot and head in flagged:  # env.A -> --env A
        return SpecError(f"{flagged[head]} {tail}: {rest}")
    for k in (key, key.split("[")[0]):
        if k in FLAG_KEYS:
            return SpecError(f"{key} ({FLAG_KEYS[k]}): {rest}")
    return SpecError(f"{key}: {rest}")


def one_line(text: str) -> str:
    """Control characters, line breaks and undecodable bytes written as escapes (as repr() would)."""
    return "".join(ascii(c)[1:-1] if unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") else c for c in text)


def build_spec(
    conf: Path | None,
    given: dict[str, Any],
    sets: tuple[tuple[str, str], ...],
    command: tuple[str, ...],
    flagged: dict[str, str],
    input_mode: str = "copy",
) -> JobSpec:
    """The job from the user's defaults file, the job file, flags (or their TFYARN_SUBMIT_* variables)
    and --set overrides, in that order.

    Fills ``flagged`` (key -> flag) for the keys that flags set.
    """
    doc = merged(load_defaults(), load_conf(conf))
    for param, value in given.items():
        key = _PARAM_KEYS[param]
        flag = FLAG_KEYS.get(key, f"--{param.replace('_', '-')}")
        if param in ("env", "docker_env"):
            value = {**_from_file(doc, key, dict, flag), **dict(value)}
        elif param in _APPENDED:
            if param == "input":
                value = [{"src": src, "dest": dest, "mode": input_mode} for src, dest in map(split_pair, value)]
            value = [*_from_file(doc, key, list, flag), *value]
        if param == "num_workers":  # MIN:MAX: elastic workers; a single count: a gang, whatever the file says
            elastic = isinstance(value, tuple)
            if elastic or "min_instances" in ((doc.get("roles") or {}).get("worker") or {}):
                set_path(doc, "roles.worker.min_instances", value[0] if elastic else 0)
                flagged["roles.worker.min_instances"] = flag
            value = value[1] if elastic else value
        set_path(doc, key, value)
        flagged[key] = flag
    for key, raw in sets:
        set_path(doc, key, parse_yaml(raw, f"--set {key}") if raw else "")
        flagged.pop(key, None)
    if command:
        doc["command"] = list(command)
    roles = doc.setdefault("roles", {})
    if isinstance(roles, dict) and roles.get("worker") is None:
        roles["worker"] = {"instances": 1}  # --num-workers' default
    doc.setdefault("name", default_name(doc.get("command")))
    return JobSpec.from_dict(doc)


def _from_file(doc: dict[str, Any], key: str, kind: type, flag: str) -> Any:
    """What the job file has under ``key``, which a flag adds to: it must be a list (a mapping for env)."""
    value = doc.get(key)
    if value is None:
        return kind()
    if not isinstance(value, kind):
        shape = "a mapping of NAME: value" if kind is dict else "a list"
        raise SpecError(f"{key} ({flag}): expected {shape} in the job file, got {show(value)}")
    return value


def default_name(command: Any) -> str:
    """``tfyarn-<program>``; the command is checked later, so here it may still be anything."""
    first = command[0] if isinstance(command, list) and command else "job"
    name = re.sub(r"[^A-Za-z0-9._+-]", "", os.path.basename(first))[:64] if isinstance(first, str) else ""
    return f"tfyarn-{name or 'job'}"
