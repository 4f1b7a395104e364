"""``load_job``: a JobSpec from a YAML job file, flags and ``--set`` overrides, as ``tfyarn submit`` builds it.

The CLI's layering (tfyarn.cli.jobfile) without click, so a Python caller and
the command line get the same job from the same inputs, with the same errors
naming the flag or key that is wrong.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tfyarn.cli.jobfile import _APPENDED, _PARAM_KEYS, build_spec, reworded
from tfyarn.errors import SpecError
from tfyarn.spec import JobSpec

_COUNTED = ("chief", "evaluator")  # flags given once (at most) to add a role's one task


def load_job(
    path: str | Path | None = None,
    flags: Mapping[str, Any] | None = None,
    sets: Mapping[str, Any] | Iterable[str | tuple[str, Any]] | None = None,
    *,
    command: Sequence[str] | str | None = None,
) -> JobSpec:
    """The job from ``path`` (YAML), then ``flags``, then ``sets``: each layer overrides the one before.

    ``flags``: submit's options by name (``num_workers`` or ``"--num-workers"``), valued as
    the flag takes them (``worker_memory="4g"``, ``env={"A": "1"}``, ``file=["train.py"]``);
    None means not given, and list flags add to the file's lists as repeated flags do.
    ``sets``: ``{"roles.worker.instances": 3}`` or ``["roles.worker.instances=3"]``; a string
    value is read as YAML, as ``--set`` reads it. ``command``: what every task runs (a string
    is split as a shell would). Raises SpecError naming the flag or key at fault.
    """
    given: dict[str, Any] = {}
    input_mode = "copy"
    for raw_name, value in (flags or {}).items():
        name = str(raw_name).lstrip("-").replace("-", "_")
        if name not in _PARAM_KEYS and name != "input_mode":
            raise SpecError(f"flags: {raw_name!r} is not a submit option (e.g. num_workers, worker_memory, file)")
        if value is None:
            continue
        if name == "input_mode":
            input_mode = value
        elif name in _COUNTED:
            if value:  # True or 1 adds the role, as the flag given once does
                given[name] = int(value)
        else:
            given[name] = _as_flag_value(name, value)
    argv = tuple(shlex.split(command) if isinstance(command, str) else command or ())
    flagged: dict[str, str] = {}
    try:
        return build_spec(Path(path) if path is not None else None, given, _set_pairs(sets), argv, flagged, input_mode)
    except SpecError as e:
        raise reworded(e, flagged) from None


def _as_flag_value(name: str, value: Any) -> Any:
    """A value as click hands it to submit: repeatable flags as tuples, ``env`` as NAME=VALUE pairs."""
    if name == "env":
        items = value.items() if isinstance(value, Mapping) else [_pair(v, "env") for v in _many(value)]
        return tuple((str(k), str(v)) for k, v in items)
    if name in _APPENDED:
        return tuple(str(v) for v in _many(value))
    return value


def _many(value: Any) -> list[Any]:
    """One value or a list of them, as a repeatable flag takes one or more."""
    return [value] if isinstance(value, (str, Path)) or not isinstance(value, Iterable) else list(value)


def _pair(item: Any, what: str) -> tuple[str, Any]:
    if isinstance(item, str):
        key, sep, val = item.partition("=")
        if not sep or not key:
            raise SpecError(f"{what}: {item!r} is not KEY=VALUE")
        return key, val
    if isinstance(item, (tuple, list)) and len(item) == 2:
        return str(item[0]), item[1]
    raise SpecError(f"{what}: {item!r} is not KEY=VALUE nor a (key, value) pair")


def _set_pairs(sets: Mapping[str, Any] | Iterable[str | tuple[str, Any]] | None) -> tuple[tuple[str, str], ...]:
    """``--set`` pairs as the CLI has them: each value YAML text (a non-string value written as JSON, a YAML subset)."""
    items = sets.items() if isinstance(sets, Mapping) else [_pair(s, "sets") for s in sets or ()]
    pairs = []
    for key, value in items:
        if not isinstance(value, str):
            try:
                value = json.dumps(value)
            except (TypeError, ValueError):
                raise SpecError(f"--set {key}: {value!r} is not a YAML value") from None
        pairs.append((str(key), value))
    return tuple(pairs)
