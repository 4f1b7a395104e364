"""``tfyarn history``: your jobs, from the ResourceManager and from the status documents saved on HDFS."""

from __future__ import annotations

import json
import time
from datetime import datetime

import click

from tfyarn.cli.params import DURATION
from tfyarn.cli.table import table
from tfyarn.history import HistoryEntry, select
from tfyarn.status import JobState

COLUMNS = ("APPLICATION", "NAME", "FRAMEWORK", "STATE", "QUEUE", "STARTED", "DURATION", "TASKS", "GPUS", "KNOWN TO")


def _row(e: HistoryEntry) -> list[str]:
    started = datetime.fromtimestamp(e.start_time).strftime("%Y-%m-%d %H:%M:%S") if e.start_time else "-"
    duration = "-" if e.duration_s is None else f"{e.duration_s:.0f}s"
    known = {"yarn": "RM", "hdfs": "HDFS", "both": "RM, HDFS"}[e.source]
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


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--since", type=DURATION, default=0, help="Only jobs started this long ago or later, e.g. 7d, 12h.")
@click.option("--user", default="", help="Whose jobs (their HDFS job dir must be readable to you). [default: you]")
@click.option(
    "--state",
    type=click.Choice([s.value for s in JobState], case_sensitive=False),
    default=None,
    help="Only jobs in this state.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list; fields as the columns, lower case.")
def history(since: int, user: str, state: str | None, as_json: bool) -> None:
    """Your tfyarn jobs, newest first: those the ResourceManager knows, and those it has forgotten.

    \b
    The RM forgets finished jobs (past its limit, or when it restarts without a
    state store). Every tfyarn job saves its final status on HDFS
    (hdfs:///user/<user>/.tfyarn/jobs/<app>/status.json), so it stays listed
    here, and `tfyarn status`, `logs` and `fetch` keep working for it.
    KNOWN TO says who has the job: the RM, HDFS, or both.
    """
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
