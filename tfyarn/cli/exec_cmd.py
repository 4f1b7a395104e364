"""``tfyarn exec``: run a command in a running task's container, as its own command runs there."""

from __future__ import annotations

import os
import sys

import click

from tfyarn import protocol
from tfyarn.cli.jobs_cmd import _check


@click.command()
@click.argument("app_id")
@click.option(
    "--task", "task_name", required=True, metavar="ROLE:INDEX", help="The task to run in, e.g. worker:0 or chief:0."
)
@click.option("-i", "--interactive", is_flag=True, help="Send this side's stdin to the command (a pipe, or keys).")
@click.option(
    "-t",
    "--tty",
    is_flag=True,
    help="Give the command a terminal (a shell's prompt, line editing, ^C to it); this terminal goes raw meanwhile.",
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- COMMAND [ARG]...")
def exec_cmd(app_id: str, task_name: str, interactive: bool, tty: bool, command: tuple[str, ...]) -> None:
    """Run COMMAND in task ROLE:INDEX of running job APP_ID: in its container, with its environment
    (TF_CONFIG, CUDA_VISIBLE_DEVICES, the DDP variables), working dir and GPUs, and print its output.
    Exits with COMMAND's exit code.

    \b
    Examples:
      tfyarn exec APP_ID --task worker:0 -- nvidia-smi
      tfyarn exec APP_ID --task worker:1 -- sh -c 'echo $TF_CONFIG'
      tfyarn exec -it APP_ID --task chief:0 -- bash     # a shell; exit or ^D ends it

    Only the job's owner can: the command travels through the job's own TLS channel (skein's
    key-value store), which only the credentials it was submitted with open; there is no sshd.
    Every exec is an event on the job's status page and in `tfyarn status`. The command ends, at
    the latest, when the task's own command does. Without -t, Ctrl-C here sends SIGINT to it.
    """
    from tfyarn import execclient
    from tfyarn.client import Client

    _check(app_id)
    try:
        protocol.parse_task_name(task_name)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--task") from None
    if tty and not (os.isatty(sys.stdin.fileno()) and interactive):
        raise click.UsageError("-t needs -i and a terminal on stdin: run `tfyarn exec -it ...` in one, or drop -t")
    opts = execclient.ExecOptions(app_id, task_name, command, interactive, tty)
    with Client() as client:
        code = execclient.run(client, opts)
    raise click.exceptions.Exit(code)
