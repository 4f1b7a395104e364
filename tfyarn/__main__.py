"""``python -m tfyarn`` is the ``tfyarn`` command."""

from tfyarn.cli.main import cli

cli(prog_name="tfyarn")
