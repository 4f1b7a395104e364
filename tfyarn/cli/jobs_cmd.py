"""``tfyarn status | list | logs | kill``: following jobs after submit."""

from __future__ import annotations

import json
import time
from datetime import datetime

import click

from tfyarn import protocol
from tfyarn.cli.table import table
from tfyarn.status import is_app_id
from tfyarn.wire import Event, JobStatus, StatusDoc, TaskStatus, report_dict


def _check(app_id: str) -> str:
    if not is_app_id(app_id):
        raise click.BadParameter(f"{app_id!r} is not a YARN application id (application_<ts>_<n>)", param_hint="APP_ID")
    return app_id


@click.command()
@click.argument("app_id")
@click.option("--json", "as_json", is_flag=True, help="Print job and tasks as JSON (fields: docs/monitoring.md).")
def status(app_id: str, as_json: bool) -> None:
    """Show job APP_ID: state, diagnostics, and per task role, index, host, container, state, exit code.

    Per-task detail comes from the running AM, or from its log once the job has ended
    (available when YARN has aggregated the logs, seconds after the end).
    """
    from tfyarn.client import Client

    _check(app_id)
    with Client() as client:
        rep = client.report(app_id)
        doc = client.status_doc(app_id)
    if as_json:
        click.echo(JobStatus(rep, doc).to_json(indent=2))
        return
    click.echo(
        f"{rep.app_id}  {rep.name}  {rep.framework}  {rep.state.value}  "
        + (f"(YARN {rep.yarn_state}/{rep.final_status})" if rep.yarn_state else "(the RM has forgotten it: from HDFS)")
    )
    click.echo(f"Queue: {rep.queue}  User: {rep.user}  Tracking URL: {rep.tracking_url}")
    if not rep.state.is_terminal():
        click.echo(f"Status page: {protocol.status_page_url(rep.tracking_url)}")
    if rep.diagnostics:
        click.echo(f"Diagnostics: {rep.diagnostics}")
    if doc and doc.tasks:
        click.echo()
        for line in table(TASK_COLUMNS, [_task_row(t) for t in doc.tasks]):
            click.echo(line)
    elif rep.state.is_terminal():
        click.echo("(per-task detail not available yet: YARN is still aggregating the logs)")
    if doc and doc.events:
        shown = doc.events[-EVENTS_SHOWN:]
        click.echo(f"\nEvents (last {len(shown)} of {len(doc.events)}; all in --json):")
        for e in shown:
            click.echo(_event_row(e))


EVENTS_SHOWN = 5  # `tfyarn status` shows this many of the job's latest events


def _event_row(e: Event) -> str:
    when = datetime.fromtimestamp(e.time).strftime("%H:%M:%S")
    first, *more = e.message.splitlines() or [""]
    return f"  {when}  {e.kind:<13}{first}{' ...' if more else ''}"


TASK_COLUMNS = ("TASK", "STATE", "RESTARTS", "EXIT", "HOST", "ADDRESS", "GPUS", "STAGING", "CONTAINER")


def _task_row(t: TaskStatus) -> list[str]:
    code = "" if t.exit_code is None else str(t.exit_code)
    staging = "-" if t.staging_s is None else f"{t.staging_s:.1f}s"
    devices = ",".join(str(d) for d in t.gpus) or "-"
    return [
        t.name,
        t.state.value,
        str(t.restarts),
        code,
        t.host or "-",
        t.address or "-",
        devices,
        staging,
        t.yarn_container_id or "-",
    ]


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True, help="Newest N jobs.")
def list_(as_json: bool, limit: int) -> None:
    """List tfyarn jobs (YARN applications tagged `tfyarn`), newest first."""
    from tfyarn.client import Client

    with Client() as client:
        jobs = client.list_jobs()[:limit]
    if as_json:
        click.echo(json.dumps([report_dict(j) for j in jobs], indent=2))
        return
    rows = [[j.app_id, j.name, j.framework, j.state.value, j.queue, _started(j.start_time_ms)] for j in jobs]
    for line in table(("APPLICATION", "NAME", "FRAMEWORK", "STATE", "QUEUE", "STARTED"), rows):
        click.echo(line)


def _started(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


@click.command()
@click.argument("app_id")
def kill(app_id: str) -> None:
    """Kill job APP_ID; YARN stops its containers and the executors stop every process they started."""
    from tfyarn.client import Client

    _check(app_id)
    with Client() as client:
        client.kill(app_id)
    click.echo(f"Killed {app_id}")


@click.command()
@click.argument("app_id")
@click.option("--task", "task_name", default=None, help="One task's output, e.g. worker:1 or chief:0.")
@click.option("--follow", "-f", is_flag=True, help="With --task: keep printing new output until the task ends.")
def logs(app_id: str, task_name: str | None, follow: bool) -> None:
    """Print job APP_ID's logs: all containers (after the job), or one task's (any time, with --task).

    \b
    tfyarn's own lines (the AM's and each executor's) read
      2026-12-03 16:40:01,123 INFO tfyarn.executor: worker:0 registered node1:40123; ...
    time, level (INFO, WARNING, ERROR), logger (tfyarn.am, tfyarn.executor...), message:
    Hadoop's log4j layout, so they sort in with skein's and YARN's Java logs.
    Everything else is your command's own output.
    """
    from tfyarn.client import Client

    _check(app_id)
    if follow and not task_name:
        raise click.UsageError("--follow needs --task ROLE:INDEX")
    if task_name is None:
        with Client() as client:
            click.echo(client.logs(app_id), nl=False)
        return
    try:
        role, index = protocol.parse_task_name(task_name)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--task") from None
    with Client() as client:
        printed = 0
        while True:
            rep = client.report(app_id)
            doc = client.status_doc(app_id)
            task = _find(doc, role, index)
            if task is None:
                if doc is None and not rep.state.is_terminal():
                    _page_closed(app_id, rep.user)
                if rep.state.is_terminal() or not follow:
                    raise click.ClickException(f"no task {task_name} in {app_id} (yet)")
            else:
                text = client.task_log(app_id, task, running=not rep.state.is_terminal())
                if text is None and not follow:
                    raise click.ClickException(
                        f"{task_name} of {app_id} has ended; YARN collects its log when "
                        f"the job ends: try again then, or use --follow"
                    )
                if text is not None:
                    click.echo(text[printed:], nl=False)
                    printed = len(text)
                    if not follow or rep.state.is_terminal() or task.state.is_terminal():
                        return
            time.sleep(1.0)


def _page_closed(app_id: str, owner: str) -> None:
    """A running job whose status page (which says where each task runs) the caller may not read: say why."""
    from tfyarn import credentials

    me = credentials.user_name()
    if owner and me != owner:
        raise click.ClickException(
            f"{app_id}'s status page, which says where its tasks run, is not open to you ({me}): its owner "
            f"({owner}) opens it, and its logs, with --view-acl {me}"
        )


def _find(doc: StatusDoc | None, role: str, index: int) -> TaskStatus | None:
    return doc.task(role, index) if doc else None


@click.command()
@click.argument("app_id")
@click.option(
    "--timeout", type=click.IntRange(min=1), default=600, show_default=True, help="Seconds to wait for the snapshot."
)
def save(app_id: str, timeout: int) -> None:
    """Publish a snapshot of running job APP_ID's outputs now, to <URI>.snapshots/<UTC time>.

    Its owner, and the users its --modify-acl names (YARN checks: the save
    reaches the job as a signal the ResourceManager passes to its AM).
    """
    from tfyarn.client import Client
    from tfyarn.saveclient import save as save_job

    _check(app_id)
    with Client() as client:
        uris = save_job(client, app_id, timeout, progress=lambda m: click.echo(m, err=True))
    for uri in uris:
        click.echo(f"Snapshot: {uri}")
