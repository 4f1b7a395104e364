"""The sweep's Optuna side: its search space, sampler, pruner and storage, and where a sweep is kept.

A sweep's id names its study and, by default, its storage: an SQLite file in ~/.tfyarn/sweeps/<id>.db,
beside <id>.yaml, the sweep spec as it was started (``sweep resume`` and ``sweep status`` read it).
Any Optuna RDB URL (PostgreSQL, MySQL) serves a shared study instead.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from tfyarn.sweep.spec import Param, SweepSpec

STUDY_STOP = "tfyarn_stop_requested"  # a study attribute `sweep stop` sets; the runner ends when it sees it
TRIAL_APP = "app_id"  # each trial's YARN application
STUDY_STOPPED = "tfyarn_stopped_trials"  # the numbers of trials a stop killed: not counted, run again on resume
STUDY_REQUEUED = "tfyarn_requeued_trials"  # stopped trials whose values a resume has queued again
TRIAL_WHY = "why"  # why a trial failed: its job's diagnostics, or "objective never reported"


def sweeps_dir() -> Path:
    return Path.home() / ".tfyarn" / "sweeps"


def new_id(spec: SweepSpec) -> str:
    return spec.name or f"sweep-{uuid.uuid4().hex[:8]}"


def storage_url(spec: SweepSpec, sweep_id: str) -> str:
    if spec.storage:
        return spec.storage
    sweeps_dir().mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{sweeps_dir() / f'{sweep_id}.db'}"


def distributions(params: tuple[Param, ...]) -> dict[str, Any]:
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    out: dict[str, Any] = {}
    for p in params:
        if p.type == "categorical":
            out[p.name] = CategoricalDistribution(list(p.choices))
        elif p.type == "int":
            assert p.low is not None and p.high is not None
            out[p.name] = IntDistribution(int(p.low), int(p.high), log=p.log, step=int(p.step or 1))
        else:
            assert p.low is not None and p.high is not None
            out[p.name] = FloatDistribution(p.low, p.high, log=p.log, step=p.step)
    return out


def sampler(spec: SweepSpec) -> Any:
    import optuna

    if spec.sampler == "grid":
        return optuna.samplers.GridSampler({p.name: list(p.grid()) for p in spec.params}, seed=spec.seed)
    if spec.sampler == "random":
        return optuna.samplers.RandomSampler(seed=spec.seed)
    return optuna.samplers.TPESampler(seed=spec.seed)


def pruner(spec: SweepSpec) -> Any:
    import optuna

    if spec.pruner == "none":
        return optuna.pruners.NopPruner()
    # Prune only once two trials have completed, and not before a trial's second report.
    return optuna.pruners.MedianPruner(n_startup_trials=2, n_warmup_steps=1)


def open_study(spec: SweepSpec, sweep_id: str, create: bool) -> Any:
    """The sweep's study: created (``create``), or loaded (resume, status, stop) with the same sampler and pruner."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    direction = spec.objective.direction
    url = storage_url(spec, sweep_id)
    if create:
        return optuna.create_study(
            study_name=sweep_id, storage=url, direction=direction, sampler=sampler(spec), pruner=pruner(spec)
        )
    return optuna.load_study(study_name=sweep_id, storage=url, sampler=sampler(spec), pruner=pruner(spec))


def stopped(st: Any) -> set[int]:
    return set(st.user_attrs.get(STUDY_STOPPED) or ())


def mark_stopped(st: Any, numbers: list[int]) -> None:
    st.set_user_attr(STUDY_STOPPED, sorted(stopped(st) | set(numbers)))


def tell(st: Any, trial: Any, value: float | None = None, state: Any = None) -> None:
    """``st.tell``, where the trial's end is stored even when the sampler asks to stop the study.

    The grid sampler calls ``Study.stop()`` once its grid is covered, which Optuna refuses outside
    ``optimize`` (after storing the trial); the runner counts trials itself, so that request is moot."""
    try:
        if value is None:
            st.tell(trial, state=state)
        else:
            st.tell(trial, value)
    except RuntimeError as e:
        if "Study.stop" not in str(e):
            raise


def requeue_stopped(st: Any) -> int:
    """Queue again the values of every trial a stop killed, once each: a resume runs those trials anew
    (a grid's points included), then samples. How many were queued."""
    done = set(st.user_attrs.get(STUDY_REQUEUED) or ())
    again = [t for t in st.get_trials(deepcopy=False) if t.number in stopped(st) and t.number not in done]
    for t in again:
        st.enqueue_trial(t.params)
    if again:
        st.set_user_attr(STUDY_REQUEUED, sorted(done | {t.number for t in again}))
    return len(again)
