"""``tfyarn wait``: re-attach to a job and follow it to its end, as ``submit --wait`` does.

Both commands end through ``follow_to_end``, so they print, exit and detach
alike: progress on stderr; the final lines, or one JSON object, on stdout;
exit 4 unless the job SUCCEEDED; and a Ctrl-C that stops only the following
(exit 130): hours of training should not hang on one terminal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from tfyarn.cli.jobs_cmd import _check
from tfyarn.errors import JobFailed, TfyarnError
from tfyarn.status import JobReport
from tfyarn.wire import JobStatus, StatusDoc

INTERRUPTED_EXIT = 130  # as a shell reports a command stopped by SIGINT


def job_dict(rep: JobReport) -> dict[str, Any]:
    """What ``--json`` prints of a job at any moment."""
    return {"app_id": rep.app_id, "tracking_url": rep.tracking_url, "state": rep.state.value}


def detached_line(app_id: str) -> str:
    """Said on Ctrl-C: the job is not stopped, and the two ways to deal with it."""
    return (
        f"Interrupted: {app_id} keeps running; re-attach with `tfyarn wait {app_id}`, "
        f"stop it with `tfyarn kill {app_id}`"
    )


@contextmanager
def detach_on_ctrl_c(app_id: str) -> Iterator[None]:
    """Ctrl-C inside leaves job ``app_id`` running: one line on stderr says how to re-attach or stop it, exit 130."""
    try:
        yield
    except KeyboardInterrupt:
        click.echo(detached_line(app_id), err=True)
        raise click.exceptions.Exit(INTERRUPTED_EXIT) from None


def follow_to_end(client: Any, app_id: str, total: int | None, as_json: bool) -> None:
    """Follow ``app_id`` with progress on stderr, then print how it ended; JobFailed unless it SUCCEEDED."""
    with detach_on_ctrl_c(app_id):
        final = client.wait(app_id, total, progress=lambda line: click.echo(line, err=True))
    if as_json:
        doc = _final_doc(client, app_id)
        status = JobStatus(final, doc).to_dict() if doc is not None else None
        click.echo(json.dumps({**job_dict(final), "diagnostics": final.diagnostics, "status": status}))
    else:
        click.echo(f"{app_id} {final.state.value}: {final.diagnostics}")
        click.echo(f"Tracking URL: {final.tracking_url}")
    if final.state.value != "SUCCEEDED":
        raise JobFailed(f"{app_id} ended {final.state.value}; logs: tfyarn logs {app_id}")


def _final_doc(client: Any, app_id: str) -> StatusDoc | None:
    """The AM's final status document, or None when it cannot be had (the JSON then says null)."""
    try:
        doc: StatusDoc | None = client.status_doc(app_id)
        return doc
    except TfyarnError:
        return None


@click.command()
@click.argument("app_id")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="When it ends, print one JSON object on stdout: app_id, tracking_url, state, diagnostics, "
    "status (what `tfyarn status --json` prints, or null).",
)
def wait(app_id: str, as_json: bool) -> None:
    """Follow job APP_ID to its end, as `submit --wait` does: re-attach after submit or after Ctrl-C.

    Ctrl-C stops following, not the job.

    \b
    Exit codes: 0 SUCCEEDED, 4 FAILED or KILLED, 130 interrupted (the job keeps running),
    3 cluster unreachable, 1 other errors.
    """
    from tfyarn.client import Client

    _check(app_id)
    with Client() as client:
        follow_to_end(client, app_id, None, as_json)
