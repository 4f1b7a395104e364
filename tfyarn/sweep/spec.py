"""A sweep's typed spec (``tfyarn sweep --conf sweep.yaml``), checked strictly before anything runs.

Pure: no Optuna, no cluster. Each error is one line naming the key at fault and what would be right,
as the job spec's are. The job template itself is an ordinary job (a job file or an inline mapping),
loaded by tfyarn.jobload once per trial with the trial's values substituted.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tfyarn.errors import SpecError

PARAM_TYPES = ("float", "int", "categorical")
SAMPLERS = ("tpe", "random", "grid")
PRUNERS = ("median", "none")
DIRECTIONS = ("minimize", "maximize")
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RESERVED = ("trial", "sweep")  # placeholders every trial gets: its number, the sweep's id
_KEYS = (
    "name",
    "job",
    "params",
    "env",
    "objective",
    "trials",
    "parallel",
    "sampler",
    "pruner",
    "max_failures",
    "storage",
    "seed",
)


@dataclass(frozen=True)
class Param:
    """One dimension of the search space."""

    name: str
    type: str  # float, int, categorical
    low: float | None = None
    high: float | None = None
    log: bool = False
    step: float | None = None
    choices: tuple[Any, ...] = ()

    def grid(self) -> tuple[Any, ...]:
        """Every value, for the grid sampler: categorical choices, or an int range by its step."""
        if self.type == "categorical":
            return self.choices
        if self.type == "int" and not self.log:
            assert self.low is not None and self.high is not None
            return tuple(range(int(self.low), int(self.high) + 1, int(self.step or 1)))
        raise SpecError(
            f"params.{self.name}: the grid sampler needs values to enumerate: make it categorical (choices) "
            "or an int without log, or use sampler tpe or random"
        )


@dataclass(frozen=True)
class Objective:
    metric: str  # the name the script reports with tfyarn.report.metric
    direction: str = "minimize"
    task: str = ""  # ROLE:INDEX whose value counts; "" = the first task (in the job's order) that reports it


@dataclass(frozen=True)
class SweepSpec:
    job: dict[str, Any] | str  # an inline job mapping, or a job file's path (relative to the sweep file)
    params: tuple[Param, ...]
    objective: Objective
    name: str = ""
    env: dict[str, str] = field(default_factory=dict)  # set in every task, placeholders substituted
    trials: int = 10
    parallel: int = 1
    sampler: str = "tpe"
    pruner: str = "median"
    max_failures: int = 0  # 0: the sweep stops only when every trial so far failed
    storage: str = ""  # an Optuna RDB URL; "" = ~/.tfyarn/sweeps/<id>.db
    seed: int | None = None
    base_dir: str = ""  # the sweep file's dir: the template's relative `files` and `code` are found from there

    @classmethod
    def from_dict(cls, data: Any, base_dir: Path | None = None) -> SweepSpec:
        if not isinstance(data, dict):
            raise SpecError(f"a sweep file is a mapping of keys ({', '.join(_KEYS)}), not {type(data).__name__}")
        unknown = sorted(set(data) - set(_KEYS))
        if unknown:
            raise SpecError(f"unknown sweep key {unknown[0]!r}: the keys are {', '.join(_KEYS)}")
        job = data.get("job")
        if isinstance(job, str):
            path = (base_dir or Path.cwd()) / job
            if not path.is_file():
                raise SpecError(f"job: no job file {str(path)!r}; give a job file's path or the job inline")
            job = str(path)
        elif not isinstance(job, dict):
            raise SpecError("job: missing; give the job template, a job file's path or an inline job mapping")
        params = _params(data.get("params"))
        spec = cls(
            job=job,
            params=params,
            objective=_objective(data.get("objective")),
            name=_name(data.get("name", "")),
            env=_env(data.get("env", {})),
            trials=_count("trials", data.get("trials", 10), 1),
            parallel=_count("parallel", data.get("parallel", 1), 1),
            sampler=_choice("sampler", data.get("sampler", "tpe"), SAMPLERS),
            pruner=_choice("pruner", data.get("pruner", "median"), PRUNERS),
            max_failures=_count("max_failures", data.get("max_failures", 0), 0),
            storage=_text("storage", data.get("storage", "")),
            seed=None if data.get("seed") is None else _count("seed", data["seed"], 0),
            base_dir=str((base_dir or Path.cwd()).resolve()),
        )
        if spec.sampler == "grid":
            for p in params:
                p.grid()
        return spec


def _params(raw: Any) -> tuple[Param, ...]:
    if not isinstance(raw, dict) or not raw:
        raise SpecError(
            "params: missing; give at least one, e.g. params: {lr: {type: float, low: 1e-4, high: 0.1, log: true}}"
        )
    return tuple(_param(str(name), value) for name, value in raw.items())


def _param(name: str, raw: Any) -> Param:
    where = f"params.{name}"
    if not NAME_RE.fullmatch(name) or name in RESERVED:
        raise SpecError(
            f"{where}: a parameter's name is a letter or _ then letters, digits or _, and not "
            f"{' or '.join(RESERVED)} (placeholders of their own)"
        )
    if not isinstance(raw, dict):
        raise SpecError(f"{where}: a mapping with type ({', '.join(PARAM_TYPES)}) and its bounds or choices")
    kind = raw.get("type")
    if kind not in PARAM_TYPES:
        raise SpecError(f"{where}.type: {kind!r} is not one of {', '.join(PARAM_TYPES)}")
    allowed = {
        "float": {"type", "low", "high", "log", "step"},
        "int": {"type", "low", "high", "log", "step"},
        "categorical": {"type", "choices"},
    }[kind]
    extra = sorted(set(raw) - allowed)
    if extra:
        raise SpecError(f"{where}: {extra[0]!r} is not a key of a {kind} parameter ({', '.join(sorted(allowed))})")
    if kind == "categorical":
        choices = raw.get("choices")
        if not isinstance(choices, list) or not choices:
            raise SpecError(f"{where}.choices: a non-empty list of values")
        if any(not isinstance(c, (str, int, float, bool)) or c is None for c in choices):
            raise SpecError(f"{where}.choices: each choice is a string, number or boolean")
        if len(set(map(repr, choices))) != len(choices):
            raise SpecError(f"{where}.choices: a value is listed twice")
        return Param(name, kind, choices=tuple(choices))
    low, high = _number(f"{where}.low", raw.get("low")), _number(f"{where}.high", raw.get("high"))
    if kind == "int" and (low != int(low) or high != int(high)):
        raise SpecError(f"{where}: an int parameter's low and high are whole numbers")
    if not low < high:
        raise SpecError(f"{where}: low ({low:g}) must be below high ({high:g})")
    log = raw.get("log", False)
    if not isinstance(log, bool):
        raise SpecError(f"{where}.log: true or false")
    if log and low <= 0:
        raise SpecError(f"{where}: a log-scale parameter needs low > 0 (it is {low:g})")
    step = None if raw.get("step") is None else _number(f"{where}.step", raw["step"])
    if step is not None and (step <= 0 or log):
        raise SpecError(f"{where}.step: a positive number, and not with log: true")
    if step is not None and kind == "int" and step != int(step):
        raise SpecError(f"{where}.step: a whole number for an int parameter")
    return Param(name, kind, low=low, high=high, log=log, step=step)


def _number(where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SpecError(f"{where}: a number is needed, got {value!r}")
    return float(value)


def _objective(raw: Any) -> Objective:
    if not isinstance(raw, dict) or not raw.get("metric"):
        raise SpecError(
            "objective: give the metric your script reports, e.g. objective: {metric: val_loss, direction: minimize}"
        )
    extra = sorted(set(raw) - {"metric", "direction", "task"})
    if extra:
        raise SpecError(f"objective: {extra[0]!r} is not one of its keys (metric, direction, task)")
    task = _text("objective.task", raw.get("task", ""))
    if task and not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*:[0-9]+", task):
        raise SpecError(f"objective.task: {task!r} is not ROLE:INDEX (e.g. worker:0)")
    return Objective(
        metric=_text("objective.metric", raw["metric"]),
        direction=_choice("objective.direction", raw.get("direction", "minimize"), DIRECTIONS),
        task=task,
    )


def _env(raw: Any) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise SpecError("env: a mapping of NAME: value (placeholders like {lr} are substituted)")
    out = {}
    for k, v in raw.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(k)):
            raise SpecError(f"env: {k!r} is not an environment variable's name")
        if isinstance(v, (dict, list)) or v is None:
            raise SpecError(f"env.{k}: a string or number")
        out[str(k)] = str(v)
    return out


def _name(value: Any) -> str:
    text = _text("name", value)
    if text and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", text):
        raise SpecError(f"name: {text!r}: letters, digits, _ . - (64 at most), starting with a letter or digit")
    return text


def _count(key: str, value: Any, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise SpecError(f"{key}: a whole number, at least {least} (got {value!r})")
    return value


def _choice(key: str, value: Any, options: tuple[str, ...]) -> str:
    if value not in options:
        raise SpecError(f"{key}: {value!r} is not one of {', '.join(options)}")
    return str(value)


def _text(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise SpecError(f"{key}: a string is needed, got {value!r}")
    return value
