"""A JSON Schema (draft 2020-12) of the job YAML, made from the job spec's own dataclasses.

Editors and CI linters check a job file with it before tfyarn sees it. It is
generated, never written by hand, so a new spec key is in it at once;
`python -m tfyarn.schema` prints it, and the copy shipped in the package
(tfyarn/job.schema.json) is checked against the generator by the unit tests.
It says what shape each key takes; tfyarn's own checks (JobSpec.validate)
still say more, e.g. which memory sizes a cluster can grant.
"""

from __future__ import annotations

import json
import types
import typing
from dataclasses import MISSING, fields
from typing import Any

from tfyarn.docker import RUNTIMES
from tfyarn.frameworks import KNOWN_ROLES, NAMES
from tfyarn.spec import INPUT_MODES, PLACEMENTS, RESTART_POLICIES, InputSpec, JobSpec, OutputSpec, RoleSpec

ID = "https://tfyarn.invalid/job.schema.json"  # no public home yet: a name, not a place to fetch from
_SCALAR = {"type": "string"}  # YAML 2 is refused: quote it
_MEMORY = {"type": ["integer", "string"], "pattern": r"^\s*[0-9]+(\.[0-9]+)?\s*[kmgtKMGT]?([iI][bB]?|[bB])?\s*$"}
# seconds, or d/h/m/s parts largest first (tfyarn.fields.parse_duration)
_DURATION = r"^\s*([0-9]+|(?=[0-9])([0-9]+[dD])?([0-9]+[hH])?([0-9]+[mM])?([0-9]+[sS])?)\s*$"
# Keys whose YAML form is wider than their field's type, or narrower (a fixed set of words).
_SPECIAL: dict[str, dict[str, Any]] = {
    "memory_mb": _MEMORY,
    "am_memory_mb": _MEMORY,
    "output_mode": {"type": ["string", "integer"], "pattern": "^0?[0-7]{3}$"},
    "max_runtime_s": {"type": ["integer", "string"], "minimum": 0, "pattern": _DURATION},
    "progress_timeout_s": {"type": ["integer", "string"], "minimum": 0, "pattern": _DURATION},
    "below_min_timeout_s": {"type": ["integer", "string"], "minimum": 1, "pattern": _DURATION},
    "permanent_exit_codes": {
        "anyOf": [
            {"type": "integer"},
            {"type": "string", "pattern": "^[0-9]+$"},
            {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^[0-9]+$"}]}},
        ]
    },
    "env": {"type": "object", "additionalProperties": _SCALAR},
    "docker_env": {"type": "object", "additionalProperties": _SCALAR},
    "framework": {"enum": list(NAMES)},
    "placement": {"enum": list(PLACEMENTS)},
    "docker_runtime": {"enum": list(RUNTIMES)},
    "restart_policy": {"enum": list(RESTART_POLICIES)},
    "mode": {"enum": list(INPUT_MODES)},
}


def _of_type(hint: Any) -> dict[str, Any]:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is bool:
        return {"type": "boolean"}
    if hint is int:
        return {"type": "integer"}
    if hint is float:
        return {"type": "number"}
    if hint is str:
        return {"type": "string"}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_of_type(a) for a in args if a is not type(None)] + [{"type": "null"}]}
    if origin is tuple and args and args[-1] is Ellipsis:
        return {"type": "array", "items": _of_type(args[0])}
    if origin is dict:
        return {"type": "object", "additionalProperties": _of_type(args[1])}
    raise TypeError(f"no JSON Schema for {hint!r}")


def _object(cls: type, skip: tuple[str, ...] = (), short_form: str = "") -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    props: dict[str, Any] = {}
    required = []
    for f in fields(cls):
        if f.name in skip:
            continue
        if f.name in _SPECIAL:
            props[f.name] = dict(_SPECIAL[f.name])
        elif f.name in ("inputs", "outputs"):
            item = _object(InputSpec if f.name == "inputs" else OutputSpec, short_form="SRC:DEST")
            props[f.name] = {"type": "array", "items": item}
        else:
            props[f.name] = _of_type(hints[f.name])
        if f.default is MISSING and f.default_factory is MISSING and cls is not JobSpec:
            required.append(f.name)
        elif f.default is not MISSING:
            props[f.name]["default"] = list(f.default) if isinstance(f.default, tuple) else f.default
    obj: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        obj["required"] = required
    if short_form:
        return {"oneOf": [{"type": "string", "minLength": 1, "description": short_form}, obj]}
    return obj


def job_schema() -> dict[str, Any]:
    """The schema of a job file (`--conf`, the defaults file): every key optional but `name` when alone."""
    schema = _object(JobSpec, skip=("roles",))
    role = _object(RoleSpec, skip=("name",))
    schema["properties"]["roles"] = {
        "type": "object",
        "propertyNames": {"pattern": "^[a-z][a-z0-9_-]*$"},
        "additionalProperties": {"anyOf": [role, {"type": "null"}]},
        "description": "role name (" + ", ".join(KNOWN_ROLES) + ") -> its settings",
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": ID,
        "title": "tfyarn job file",
        "description": "Every key is documented in job.yaml beside this file (conf/job.yaml in the repo).",
        **schema,
    }


def text() -> str:
    return json.dumps(job_schema(), indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(text(), end="")
