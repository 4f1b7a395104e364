"""``tfyarn sweep``: a hyperparameter search whose trials are tfyarn jobs (Optuna searches, YARN runs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import yaml

from tfyarn.cli.table import table
from tfyarn.errors import SpecError, TfyarnError

STOP_WAIT_S = 20  # for the sweep's own process to stop its trials, before `stop` does it itself
COLUMNS = ("TRIAL", "STATE", "OBJECTIVE", "DURATION", "APPLICATION", "PARAMS", "")


def _load(conf: Path) -> Any:
    from tfyarn.sweep.spec import SweepSpec

    try:
        data = yaml.safe_load(conf.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise SpecError(f"--conf: cannot read {conf}: {e}") from None
    return SweepSpec.from_dict(data, conf.parent)


def _saved(sweep_id: str) -> tuple[Any, Path]:
    """The spec a sweep was started with (~/.tfyarn/sweeps/<id>.yaml)."""
    from tfyarn.sweep.spec import SweepSpec
    from tfyarn.sweep.study import sweeps_dir

    path = sweeps_dir() / f"{sweep_id}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in sweeps_dir().glob("*.yaml")) if sweeps_dir().is_dir() else []
        raise TfyarnError(f"no sweep {sweep_id!r} here; known: {', '.join(known) or 'none'} (in {sweeps_dir()})")
    return SweepSpec.from_dict(yaml.safe_load(path.read_text())), path


def _run(spec: Any, sweep_id: str, create: bool) -> None:
    from tfyarn.client import Client
    from tfyarn.sweep import room
    from tfyarn.sweep import study as studies
    from tfyarn.sweep.runner import Runner
    from tfyarn.sweep.trialjob import sample_job

    st = studies.open_study(spec, sweep_id, create=create)
    if not create:
        st.set_user_attr(studies.STUDY_STOP, False)
        again = studies.requeue_stopped(st)
        if again:
            click.echo(f"{again} trial(s) a stop killed run again with their values", err=True)
    click.echo(
        f"Sweep {sweep_id}: {spec.trials} trial(s), {spec.parallel} at a time; `tfyarn sweep status {sweep_id}`",
        err=True,
    )
    with Client() as client:
        room.check(spec.parallel, sample_job(spec, sweep_id), client.rm_rest, lambda m: click.echo(m, err=True))
        out = Runner(spec, sweep_id, client, st, say=lambda m: click.echo(m, err=True)).run()
    for m in out.messages:
        click.echo(m, err=True)
    click.echo(f"{out.complete} complete, {out.pruned} pruned, {out.failed} failed", err=True)
    _status(st, as_json=False)
    if out.stopped:
        click.echo(f"Resume with `tfyarn sweep resume {sweep_id}`.", err=True)
        raise click.exceptions.Exit(130)
    if not out.complete:
        raise click.exceptions.Exit(4)


def _plan(spec: Any, sweep_id: str) -> None:
    """The sweep as it would run, in ``#`` lines, then trial 0's job (each parameter at its first value)."""
    from tfyarn.cli import dryrun
    from tfyarn.sweep.study import sweeps_dir
    from tfyarn.sweep.trialjob import sample_job

    o = spec.objective
    click.echo(
        f"# sweep {sweep_id}: {spec.trials} trial(s), {spec.parallel} at a time, sampler {spec.sampler}, "
        f"pruner {spec.pruner}; objective: {o.direction} {o.metric}" + (f" of {o.task}" if o.task else "")
    )
    click.echo(f"# study: {spec.storage or f'sqlite:///{sweeps_dir() / sweep_id}.db'}")
    for p in spec.params:
        if p.type == "categorical":
            click.echo(f"# param {p.name}: one of {', '.join(map(str, p.choices))}")
        else:
            scale = "log scale" if p.log else (f"step {p.step:g}" if p.step else "uniform")
            click.echo(f"# param {p.name}: {p.type} from {p.low:g} to {p.high:g} ({scale})")
    click.echo("# trial 0's job, each parameter at its first choice or low bound:")
    dryrun.show(sample_job(spec, sweep_id), "job", {})


def _status(st: Any, as_json: bool) -> None:
    import optuna

    from tfyarn.sweep import study as studies

    done = [t for t in st.get_trials(deepcopy=False) if t.state == optuna.trial.TrialState.COMPLETE]
    best = (
        min(done, key=lambda t: t.value)
        if done and st.direction.name == "MINIMIZE"
        else (max(done, key=lambda t: t.value) if done else None)
    )
    rows, gone = [], studies.stopped(st)
    for t in st.get_trials(deepcopy=False):
        duration = (
            (t.datetime_complete - t.datetime_start).total_seconds()
            if t.datetime_complete and t.datetime_start
            else None
        )
        rows.append(
            {
                "trial": t.number,
                "state": "STOPPED" if t.number in gone else t.state.name,
                "objective": t.value,
                "duration_s": duration,
                "app_id": t.user_attrs.get(studies.TRIAL_APP, ""),
                "params": t.params,
                "why": t.user_attrs.get(studies.TRIAL_WHY, ""),
                "best": t is best,
            }
        )
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=str))
        return
    for line in table(
        COLUMNS,
        [
            [
                str(r["trial"]),
                r["state"],
                "-" if r["objective"] is None else f"{r['objective']:.6g}",
                "-" if r["duration_s"] is None else f"{r['duration_s']:.0f}s",
                r["app_id"] or "-",
                " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r["params"].items()),
                "<- best" if r["best"] else r["why"][:60],
            ]
            for r in rows
        ],
    ):
        click.echo(line)


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--conf", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="The sweep file (YAML).")
@click.option("--trials", type=int, default=None, help="How many trials in all (overrides the file's).")
@click.option("--parallel", type=int, default=None, help="How many trials run at once (overrides the file's).")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Contact nothing, write nothing: the sweep's plan, then trial 0's job as a submit would plan it.",
)
@click.pass_context
def sweep(ctx: click.Context, conf: Path | None, trials: int | None, parallel: int | None, dry_run: bool) -> None:
    """Search hyperparameters: each trial is an ordinary tfyarn job, with its values substituted.

    \b
    A sweep file names the job template and the search:
      job: job.yaml                      # or the job inline; {lr} etc. in its command
      params:
        lr: {type: float, low: 1.0e-4, high: 0.1, log: true}
        batch_size: {type: categorical, choices: [16, 32, 64]}
      objective: {metric: val_loss, direction: minimize}   # tfyarn.report.metric('val_loss', v)
      trials: 8
      parallel: 2
      sampler: tpe                       # tpe, random, grid
      pruner: median                     # median, none
    The study is kept in ~/.tfyarn/sweeps/<id>.db (or `storage:`, any Optuna RDB URL).
    Ctrl-C or `tfyarn sweep stop ID` kills the running trials; `tfyarn sweep resume ID` goes on.
    """
    if ctx.invoked_subcommand:
        return
    if conf is None:
        raise click.UsageError("give --conf SWEEP.yaml (or a subcommand: status, stop, resume)")
    import dataclasses

    from tfyarn.sweep import study as studies
    from tfyarn.sweep.trialjob import check

    spec = _load(conf)
    spec = dataclasses.replace(spec, **{k: v for k, v in (("trials", trials), ("parallel", parallel)) if v})
    check(spec)
    sweep_id = studies.new_id(spec)
    if dry_run:
        _plan(spec, sweep_id)
        return
    saved = studies.sweeps_dir() / f"{sweep_id}.yaml"
    if saved.exists():
        raise TfyarnError(
            f"a sweep {sweep_id!r} exists already: `tfyarn sweep resume {sweep_id}`, or rename it (name:)"
        )
    studies.sweeps_dir().mkdir(parents=True, exist_ok=True)
    raw = yaml.safe_load(conf.read_text())
    raw.update(
        {
            "job": spec.job,
            "trials": spec.trials,
            "parallel": spec.parallel,
            "name": sweep_id,
            "storage": studies.storage_url(spec, sweep_id),
        }
    )
    saved.write_text(yaml.safe_dump(raw))
    _run(dataclasses.replace(spec, name=sweep_id, storage=raw["storage"]), sweep_id, create=True)


@sweep.command()
@click.argument("sweep_id")
@click.option("--json", "as_json", is_flag=True, help="A JSON list of trials.")
def status(sweep_id: str, as_json: bool) -> None:
    """Each trial of sweep SWEEP_ID: its state, objective, duration, job and parameters; the best marked."""
    from tfyarn.sweep import study as studies

    spec, _ = _saved(sweep_id)
    _status(studies.open_study(spec, sweep_id, create=False), as_json)


@sweep.command()
@click.argument("sweep_id")
def stop(sweep_id: str) -> None:
    """Stop sweep SWEEP_ID: its running trials are killed (`resume` runs them again)."""
    import time

    import optuna

    from tfyarn.sweep import study as studies

    spec, _ = _saved(sweep_id)
    st = studies.open_study(spec, sweep_id, create=False)
    st.set_user_attr(studies.STUDY_STOP, True)
    click.echo(
        f"Asked sweep {sweep_id} to stop; waiting for its `tfyarn sweep` to kill the running trials ...", err=True
    )
    running = optuna.trial.TrialState.RUNNING
    deadline = time.monotonic() + STOP_WAIT_S
    while (left := st.get_trials(deepcopy=False, states=(running,))) and time.monotonic() < deadline:
        time.sleep(1)
    if left:  # its `tfyarn sweep` is gone (the machine rebooted, the terminal closed): kill them here
        from tfyarn.client import Client

        with Client() as client:
            for t in left:
                if t.user_attrs.get(studies.TRIAL_APP):
                    client.kill(t.user_attrs[studies.TRIAL_APP])
        studies.mark_stopped(st, [t.number for t in left])
        for t in left:
            studies.tell(st, t.number, state=optuna.trial.TrialState.FAIL)
    click.echo(f"Sweep {sweep_id} stopped; `tfyarn sweep resume {sweep_id}` goes on.")


@sweep.command()
@click.argument("sweep_id")
def resume(sweep_id: str) -> None:
    """Go on with sweep SWEEP_ID: its finished trials are kept, the rest are run."""
    spec, _ = _saved(sweep_id)
    _run(spec, sweep_id, create=False)
