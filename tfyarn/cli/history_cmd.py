"""``tfyarn history``: your jobs, from the ResourceManager and from the status documents saved on HDFS."""

from __future__ import annotations

import json
import time
from datetime import datetime

import click

from tfyarn import protocol
from tfyarn.cli.params import DURATION
from tfyarn.cli.table import table
from tfyarn.history import SOURCE_NAMES, HistoryEntry, select
from tfyarn.status import JobState
from tfyarn.wire import StatusDoc

COLUMNS = ("APPLICATION", "NAME", "FRAMEWORK", "STATE", "QUEUE", "STARTED", "DURATION", "TASKS", "GPUS", "KNOWN TO")


def _row(e: HistoryEntry) -> list[str]:
    started = datetime.fromtimestamp(e.start_time).strftime("%Y-%m-%d %H:%M:%S") if e.start_time else "-"
    duration = "-" if e.duration_s is None else f"{e.duration_s:.0f}s"
    known = SOURCE_NAMES[e.source]
    return [
        e.app_id,
        e.name,
        e.framework or "-",
        e.state,
        e.queue,
        started,
        duration,
        "-" if e.tasks is None else str(e.tasks),
        "-" if e.gpus is None else str(e.gpus),
        known,
    ]


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--since", type=DURATION, default=0, help="Only jobs started this long ago or later, e.g. 7d, 12h.")
@click.option("--user", default="", help="Whose jobs (their HDFS job dir must be readable to you). [default: you]")
@click.option(
    "--state",
    type=click.Choice([s.value for s in JobState], case_sensitive=False),
    default=None,
    help="Only jobs in this state.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list; fields as the columns, lower case.")
@click.pass_context
def history(ctx: click.Context, since: int, user: str, state: str | None, as_json: bool) -> None:
    """Your tfyarn jobs, newest first: those the ResourceManager knows, and those it has forgotten.

    \b
    The RM forgets finished jobs (past its limit, or when it restarts without a
    state store). Every tfyarn job saves its final status on HDFS
    (hdfs:///user/<user>/.tfyarn/jobs/<app>/status.json), so it stays listed
    here, and `tfyarn status`, `logs` and `fetch` keep working for it.
    KNOWN TO says who has the job: the RM, HDFS, or both.
    `tfyarn history serve` shows the same in a browser, with every job's page.
    """
    if ctx.invoked_subcommand is not None:
        return
    from tfyarn.client import Client

    with Client() as client:
        found, warnings = client.history(user)
    for w in warnings:
        click.echo(f"Warning: {w}", err=True)
    jobs = select(found, since, time.time(), state or "")
    if as_json:
        click.echo(json.dumps([e.to_dict() for e in jobs], indent=2))
        return
    if not jobs:
        click.echo("No jobs." if not (since or state) else "No jobs match.")
        return
    for line in table(COLUMNS, [_row(e) for e in jobs]):
        click.echo(line)


@history.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every one).")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=protocol.HISTORY_PORT, show_default=True, help="0: any free port."
)
@click.option("--user", default="", help="Whose jobs to show (their HDFS job dir must be readable). [default: you]")
def serve(host: str, port: int, user: str) -> None:
    """Serve the history page: the cluster's GPUs and who holds them, your jobs, and each job's status page
    (the AM's own, from its saved status once the job has ended). Ctrl-C stops it.

    
    Pages: /  (GPUs per node, with the running jobs' tasks; jobs, newest first)
           /job/APP_ID/  (the job's page: tasks, hosts, exit codes, timeline chart)
           /api/jobs  (the jobs as JSON, as `tfyarn history --json`)
    It reads YARN and HDFS with your credentials; anyone who reaches the port
    sees what you may see, so it listens on loopback unless --host says otherwise.
    """
    from tfyarn.cli.nodes_cmd import cluster_nodes, merge, running_jobs
    from tfyarn.client import Client
    from tfyarn.errors import TfyarnError
    from tfyarn.historyweb import HistoryServer

    with Client() as client:

        def load_index() -> tuple[list[HistoryEntry], list[object], list[str]]:
            jobs, warnings = client.history(user)
            try:
                views: list[object] = list(merge(cluster_nodes(client), running_jobs(client)))
            except TfyarnError as e:
                views, warnings = [], [*warnings, f"no GPU overview: {e}"]
            return jobs, views, warnings

        def load_doc(app_id: str) -> StatusDoc | None:
            return client.status_doc(app_id)

        try:
            server = HistoryServer(load_index, load_doc, host, port)
        except OSError as e:
            msg = f"cannot listen on {host}:{port} ({e.strerror}); choose another --port"
            raise click.ClickException(msg) from None
        click.echo(f"tfyarn history at {server.url} (Ctrl-C stops it)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            server.close()
