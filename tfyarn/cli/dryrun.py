"""`tfyarn submit --dry-run`: the pure planning step, printed; nothing is contacted or written.

Two forms, after the same summary in ``#`` lines: the resolved job (``job``,
the default), YAML that ``--conf`` loads back as the same job, so a plan can
be kept, edited and submitted; and the YARN application spec (``yarn``) that
a submit would hand to skein.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click
import yaml

from tfyarn.cli.jobfile import reworded
from tfyarn.errors import SpecError
from tfyarn.spec import JobSpec


def show(spec: JobSpec, form: str, flagged: dict[str, str]) -> None:
    """Plan ``spec`` as a submit would (so its errors show here) and print it in ``form``."""
    from dataclasses import replace

    from tfyarn import credentials, hadoop_env
    from tfyarn.plan import PlanContext, plan, renewal_for

    try:
        conf_dir = conf_dir_or_none()
        plan_ctx = PlanContext.for_spec(spec, conf_dir)
        if conf_dir and hadoop_env.kerberized(conf_dir):  # as the submit would plan it
            owner = credentials.user_name(conf_dir)
            plan_ctx = replace(plan_ctx, kerberized=True, owner=owner, renewal=renewal_for(conf_dir))
        app_spec = plan(spec, plan_ctx)
    except SpecError as e:
        raise reworded(e, flagged) from None
    click.echo(f"# tfyarn job {spec.name!r} ({spec.framework}): {spec.num_tasks} task(s)")
    for role in spec.roles.values():
        if role.instances:
            image = spec.image_for(role.name)
            where = f" in image {image} ({plan_ctx.docker_runtime} runtime)" if image else ""
            click.echo(
                f"# {role.name}: {role.instances} x ({role.memory_mb} MiB, {role.vcores} vcore(s), "
                f"{role.gpus} GPU(s)){where} runs: {shlex.join(spec.command_for(role.name))}"
            )
    for i in spec.inputs:
        click.echo(f"# input: {i.src} -> {i.local_dir} ({i.mode})")
    for o in spec.outputs:
        readers = f", read by {', '.join(spec.output_readers)}" if spec.output_readers else ""
        click.echo(
            f"# output: {o.src} -> {o.dest} (published by {spec.output_task(o)}, mode {spec.output_mode}{readers})"
        )
    if plan_ctx.env_choice is not None:
        click.echo(f"# {plan_ctx.env_choice.line()}")
        if plan_ctx.env_choice.warning:
            click.echo(f"# warning: {plan_ctx.env_choice.warning}")
    if plan_ctx.shipped_code:
        click.echo(f"# code: {plan_ctx.shipped_code.summary}")
    if plan_ctx.renewal:
        click.echo(
            f"# tokens: the AM renews the job's HDFS delegation token as {plan_ctx.renewal.principal}, "
            "from the keytab, which goes to the AM's container only"
        )

    if form == "yarn":
        click.echo(app_spec.to_yaml(), nl=False)
    else:
        click.echo(yaml.safe_dump(spec.to_dict(), sort_keys=False, allow_unicode=True), nl=False)


def conf_dir_or_none() -> Path | None:
    """The cluster config a submit would use, for --dry-run's python_env auto; None when there is none."""
    from tfyarn import hadoop_env
    from tfyarn.errors import UnreachableError

    try:
        return hadoop_env.discover().conf_dir
    except UnreachableError:
        return None
