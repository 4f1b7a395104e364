"""One trial's job: the sweep's job template with the trial's values put in its placeholders.

``{lr}`` anywhere in the template (its command, env, outputs' destinations, name...) and in the
sweep's ``env`` becomes the trial's value; ``{trial}`` its number and ``{sweep}`` the sweep's id
(so each trial's ``--output`` can go to a place of its own). Other braces (a JSON argument, a shell's
``${HOME}``) are left alone: only declared names are placeholders. Pure, but for reading the job file.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import yaml

from tfyarn.errors import SpecError
from tfyarn.spec import JobSpec
from tfyarn.sweep.spec import RESERVED, SweepSpec

_PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")
SWEEP_TAG, TRIAL_TAG = "sweep:", "trial:"


def template(spec: SweepSpec) -> dict[str, Any]:
    """The job template as a mapping (a job file is read here)."""
    if isinstance(spec.job, dict):
        return spec.job
    try:
        data = yaml.safe_load(Path(spec.job).read_text())
    except (OSError, yaml.YAMLError) as e:
        raise SpecError(f"job: cannot read {spec.job}: {e}") from None
    if not isinstance(data, dict):
        raise SpecError(f"job: {spec.job} is not a job file (a mapping of job keys)")
    return data


def placeholders(value: Any) -> set[str]:
    """Every ``{name}`` in the strings of ``value`` (nested lists and mappings too)."""
    if isinstance(value, str):
        return set(_PLACEHOLDER.findall(value))
    if isinstance(value, dict):
        return set().union(*(placeholders(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(placeholders(v) for v in value)) if value else set()
    return set()


def check(spec: SweepSpec) -> None:
    """Every parameter reaches the trial somewhere; no placeholder names a parameter that does not exist."""
    job = template(spec)
    found = placeholders(job) | placeholders(spec.env)
    names = {p.name for p in spec.params}
    unused = [p.name for p in spec.params if p.name not in found]
    if unused:
        raise SpecError(
            f"params.{unused[0]}: never used; put {{{unused[0]}}} in the job's command (e.g. --lr {{{unused[0]}}}) "
            "or in the sweep's env (e.g. env: {LR: '{" + unused[0] + "}'})"
        )
    unknown = sorted(found - names - set(RESERVED))
    if unknown:
        raise SpecError(
            f"{{{unknown[0]}}} is in the job template but is no parameter: declare it under params, "
            f"or write it as ${{{unknown[0]}}} for the shell"
        )


def _fill(value: Any, values: dict[str, str]) -> Any:
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        return {k: _fill(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, values) for v in value]
    return value


def text(value: Any) -> str:
    """How a value is written into a command line: floats in full precision, no trailing .0 for whole ints."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return repr(value)
    return str(value)


def trial_job(spec: SweepSpec, sweep_id: str, number: int, values: dict[str, Any]) -> JobSpec:
    """The job trial ``number`` submits: the template, filled in, tagged with the sweep and the trial."""
    from tfyarn.jobload import load_job

    subs = {**{k: text(v) for k, v in values.items()}, "trial": str(number), "sweep": sweep_id}
    job = _fill(template(spec), subs)
    job["env"] = {**(job.get("env") or {}), **_fill(spec.env, subs)}
    job["tags"] = [*(job.get("tags") or []), f"{SWEEP_TAG}{sweep_id}", f"{TRIAL_TAG}{number}"]
    job["name"] = f"{job.get('name') or sweep_id}-t{number}"
    base = Path(spec.base_dir or ".")  # relative local paths: from the sweep file's dir, wherever it runs
    job["files"] = [str(base / f) if isinstance(f, str) else f for f in job.get("files") or []]
    if isinstance(job.get("code"), str) and job["code"]:
        job["code"] = str(base / job["code"])
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        yaml.safe_dump(job, f)
        f.flush()
        return load_job(f.name)


def sample_job(spec: SweepSpec, sweep_id: str) -> JobSpec:
    """A trial's job with each parameter at its first choice or low bound: what every trial asks of YARN
    (parameters may be anywhere in the template, but the resources asked are the same in most sweeps)."""
    values: dict[str, Any] = {}
    for p in spec.params:
        values[p.name] = p.choices[0] if p.type == "categorical" else (int(p.low or 0) if p.type == "int" else p.low)
    return trial_job(spec, sweep_id, 0, values)
