"""Entry point: the ``tfyarn`` group, lazy subcommands, and one error handler.

Every TfyarnError and click usage error becomes one ``Error: ...`` line on
stderr and a defined exit code (see tfyarn.errors); no stack traces.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from tfyarn import __version__, protocol
from tfyarn.errors import TfyarnError

# name -> (module, attribute, short help); imported only when the command runs.
_COMMANDS: dict[str, tuple[str, str, str]] = {
    "cluster": ("tfyarn.cli.cluster_cmd", "cluster", "Run a real Hadoop cluster on this machine: one node or several."),
    "doctor": ("tfyarn.cli.doctor_cmd", "doctor_cmd", "Check that a submit would work here; name each fix."),
    "submit": ("tfyarn.cli.submit_cmd", "submit", "Submit a training job to YARN."),
    "wait": ("tfyarn.cli.wait_cmd", "wait", "Follow a job to its end (re-attach after submit or Ctrl-C)."),
    "status": ("tfyarn.cli.jobs_cmd", "status", "Show a job's state and its tasks."),
    "list": ("tfyarn.cli.jobs_cmd", "list_", "List tfyarn jobs."),
    "history": ("tfyarn.cli.history_cmd", "history", "Your jobs, those the RM has forgotten included."),
    "kill": ("tfyarn.cli.jobs_cmd", "kill", "Kill a running job."),
    "save": ("tfyarn.cli.jobs_cmd", "save", "Snapshot a running job's outputs to HDFS now."),
    "fetch": ("tfyarn.cli.fetch_cmd", "fetch", "Copy a job's outputs (or an HDFS path) here."),
    "logs": ("tfyarn.cli.jobs_cmd", "logs", "Print a job's logs, or one task's (--task, --follow)."),
    "exec": ("tfyarn.cli.exec_cmd", "exec_cmd", "Run a command in a running task's container (-it: a shell)."),
    "sweep": ("tfyarn.cli.sweep_cmd", "sweep", "Search hyperparameters: each trial a tfyarn job (Optuna)."),
    "nodes": ("tfyarn.cli.nodes_cmd", "nodes", "Each YARN node's state and health, and the tfyarn tasks on it."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in _COMMANDS:
            return None
        module, attr, _ = _COMMANDS[name]
        return getattr(importlib.import_module(module), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Short help from the table, so `tfyarn --help` imports no subcommand.
        with formatter.section("Commands"):
            formatter.write_dl([(n, h) for n, (_, _, h) in _COMMANDS.items()])

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.pop("standalone_mode", None)  # errors are always handled here
        try:
            rv = super().main(*args, standalone_mode=False, **kwargs)  # type: ignore[call-overload]
            # Without standalone mode click returns ctx.exit()'s code instead of exiting.
            sys.exit(rv if isinstance(rv, int) else 0)
        except click.exceptions.Exit as e:
            sys.exit(e.exit_code)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(130)
        except click.UsageError as e:
            hint = f" (see '{e.ctx.command_path} --help')" if e.ctx else ""
            click.echo(f"Error: {e.format_message()}{hint}", err=True)
            sys.exit(e.exit_code)
        except click.ClickException as e:
            click.echo(f"Error: {e.format_message()}", err=True)
            sys.exit(e.exit_code)
        except TfyarnError as e:
            click.echo(f"Error: {e}", err=True)
            sys.exit(e.exit_code)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            sys.exit(130)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": protocol.ENV_PREFIX},
)
@click.version_option(__version__, prog_name="tfyarn")
@click.option(
    "--principal",
    envvar=protocol.ENV_PRINCIPAL,
    default=None,
    metavar="USER@REALM",
    help=f"Kerberos principal for YARN and HDFS (with --keytab; env {protocol.ENV_PRINCIPAL}).",
)
@click.option(
    "--keytab",
    envvar=protocol.ENV_KEYTAB,
    default=None,
    metavar="PATH",
    type=click.Path(exists=True, dir_okay=False),
    help=f"Keytab for --principal (env {protocol.ENV_KEYTAB}).",
)
def cli(principal: str | None, keytab: str | None) -> None:
    """tfyarn runs TensorFlow and PyTorch training on Hadoop YARN.

    \b
    Try it on a local cluster:
      tfyarn cluster up
      tfyarn submit --num-workers 2 --wait -- python -c "print('hello from YARN')"
      tfyarn cluster down

    Against an existing cluster, set HADOOP_CONF_DIR and put its `yarn` on PATH.
    On a Kerberized cluster give --principal and --keytab (they go to skein),
    or run kinit first.
    """
    if bool(principal) != bool(keytab):
        raise click.UsageError("--principal and --keytab go together; give both, or neither (kinit)")
    if principal and keytab:  # read by tfyarn.client.Client in this process
        os.environ[protocol.ENV_PRINCIPAL], os.environ[protocol.ENV_KEYTAB] = principal, keytab
        from tfyarn import credentials  # here: most commands never need it, and startup time counts

        credentials.use_keytab(principal, keytab)
