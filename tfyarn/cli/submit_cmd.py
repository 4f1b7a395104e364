"""``tfyarn submit``: flags -> JobSpec -> (dry run | submit [and follow])."""
from __future__ import annotations

import os
import shlex
import time

import click

from tfyarn.cli.params import KEY_VALUE, MEMORY
from tfyarn.errors import JobFailed
from tfyarn.spec import JobSpec, RoleSpec


def spec_from_options(command: tuple[str, ...], name: str | None, num_workers: int, worker_memory: int,
                      worker_vcores: int, worker_gpus: int, queue: str, node_label: str,
                      env: tuple[tuple[str, str], ...], tags: tuple[str, ...], am_memory: int,
                      files: tuple[str, ...] = ()) -> JobSpec:
    """The job the flags describe (validated)."""
    default_name = f"tfyarn-{os.path.basename(command[0])}" if command else "tfyarn-job"
    worker = RoleSpec(name="worker", instances=num_workers, memory_mb=worker_memory,
                      vcores=worker_vcores, gpus=worker_gpus)
    return JobSpec(name=name or default_name, command=tuple(command), roles={"worker": worker},
                   queue=queue, node_label=node_label, env=dict(env), tags=tuple(tags), files=tuple(files),
                   am_memory_mb=am_memory).validate()


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--name", help="Application name shown by YARN. [default: tfyarn-<program>]")
@click.option("--num-workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker containers; each runs COMMAND.")
@click.option("--worker-memory", type=MEMORY, default="2g", show_default=True,
              help="Memory per worker container (e.g. 512m, 4g).")
@click.option("--worker-vcores", type=click.IntRange(min=1), default=1, show_default=True,
              help="Virtual cores per worker container.")
@click.option("--worker-gpus", type=click.IntRange(min=0), default=0, show_default=True,
              help="GPUs (yarn.io/gpu) per worker container.")
@click.option("--queue", default="default", show_default=True, help="YARN queue.")
@click.option("--node-label", default="", help="YARN node label expression for all containers.")
@click.option("--env", "env", type=KEY_VALUE, multiple=True, help="Environment variable for every task (repeatable).")
@click.option("--file", "files", type=click.Path(exists=True), multiple=True,
              help="Local file or dir to ship into every task's working dir, by its base name (repeatable).")
@click.option("--tag", "tags", multiple=True, help="YARN application tag (repeatable).")
@click.option("--am-memory", type=MEMORY, default="768m", show_default=True,
              help="Memory of the ApplicationMaster container.")
@click.option("--dry-run", is_flag=True, help="Print the YARN application spec (YAML) and submit nothing.")
@click.option("--wait", is_flag=True, help="Follow the job; exit 0 only if it SUCCEEDED.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def submit(command: tuple[str, ...], dry_run: bool, wait: bool, **opts: object) -> None:
    """Submit COMMAND (after `--`) as a YARN application, one container per task.

    \b
    Examples:
      tfyarn submit --num-workers 2 --wait -- python -c "print('hi')"
      tfyarn submit --file examples/hello.py -- python hello.py
      tfyarn submit --worker-memory 4g --worker-gpus 1 -- python train.py
      tfyarn submit --dry-run -- python train.py     # show the plan only

    \b
    Exit codes: 0 submitted (or SUCCEEDED with --wait), 2 bad input,
    3 cluster unreachable, 4 job FAILED or KILLED (with --wait), 1 other errors.
    """
    spec = spec_from_options(command, **opts)  # type: ignore[arg-type]
    if dry_run:
        from tfyarn.plan import PlanContext, plan

        click.echo(f"# tfyarn job {spec.name!r}: {spec.num_tasks} task(s)")
        click.echo(f"# command: {shlex.join(spec.command)}")
        for role in spec.roles.values():
            click.echo(f"# role {role.name}: {role.instances} x {role.memory_mb} MiB, "
                       f"{role.vcores} vcore(s), {role.gpus} GPU(s)")
        click.echo(plan(spec, PlanContext.for_spec(spec)).to_yaml(), nl=False)
        return
    from tfyarn.client import Client

    with Client() as client:
        app_id = client.submit(spec)
        rep = client.report(app_id)
        click.echo(f"Submitted {app_id} ({spec.name}: {spec.num_tasks} task(s), queue {spec.queue})")
        click.echo(f"Tracking URL: {rep.tracking_url}")
        if not wait:
            click.echo(f"Follow it with: tfyarn status {app_id} | tfyarn logs {app_id} | tfyarn kill {app_id}")
            return
        t0 = time.monotonic()
        final = client.wait(app_id, on_change=lambda r: click.echo(
            f"[{time.monotonic() - t0:6.1f}s] {app_id} {r.state.value}", err=True))
    click.echo(f"{app_id} {final.state.value}: {final.diagnostics}")
    if final.state.value != "SUCCEEDED":
        raise JobFailed(f"{app_id} ended {final.state.value}; logs: tfyarn logs {app_id}")
