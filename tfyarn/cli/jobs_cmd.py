"""``tfyarn status | kill | logs APP_ID``."""
from __future__ import annotations

import json
import re
from dataclasses import asdict

import click

_APP_ID = re.compile(r"^application_\d+_\d+$")


def _check(app_id: str) -> str:
    if not _APP_ID.match(app_id):
        raise click.BadParameter(f"{app_id!r} is not a YARN application id (application_<ts>_<n>)",
                                 param_hint="APP_ID")
    return app_id


@click.command()
@click.argument("app_id")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def status(app_id: str, as_json: bool) -> None:
    """Show the state, diagnostics and tracking URL of job APP_ID."""
    from tfyarn.client import Client

    _check(app_id)
    with Client() as client:
        rep = client.report(app_id)
    if as_json:
        d = asdict(rep)
        d["state"] = rep.state.value
        click.echo(json.dumps(d, indent=2))
        return
    click.echo(f"{rep.app_id}  {rep.name}  {rep.state.value}  (YARN {rep.yarn_state}/{rep.final_status})")
    click.echo(f"Queue: {rep.queue}  User: {rep.user}")
    click.echo(f"Tracking URL: {rep.tracking_url}")
    if rep.diagnostics:
        click.echo(f"Diagnostics: {rep.diagnostics}")


@click.command()
@click.argument("app_id")
def kill(app_id: str) -> None:
    """Kill job APP_ID; its containers and their processes are stopped by YARN."""
    from tfyarn.client import Client

    _check(app_id)
    with Client() as client:
        client.kill(app_id)
    click.echo(f"Killed {app_id}")


@click.command()
@click.argument("app_id")
def logs(app_id: str) -> None:
    """Print the aggregated logs of a finished job APP_ID (all containers)."""
    from tfyarn.client import Client

    _check(app_id)
    with Client() as client:
        click.echo(client.logs(app_id), nl=False)
