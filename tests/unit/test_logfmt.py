"""The AM's and executors' log lines: one format, with time and level, as documented in `tfyarn logs --help`."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from tfyarn.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
# Hadoop's log4j default layout: %d{ISO8601} %p %c: %m
LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (INFO|WARNING|ERROR) tfyarn\.[a-z_.]+: .+$")


def emit(code: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # log lines go to stderr, YARN's stderr file, never mixed into stdout
    return proc.stderr.splitlines()


def test_am_and_executor_lines_carry_time_level_and_logger():
    lines = emit("from tfyarn import logfmt\n"
                 "logfmt.setup(logfmt.AM_LOGGER).info('job SUCCEEDED: all 2 worker task(s) succeeded')\n"
                 "logfmt.setup(logfmt.EXECUTOR_LOGGER).warning('snapshot failed')\n"
                 "import logging; logging.getLogger('tfyarn.executor.staging').info('staged 3 file(s)')\n"
                 "logging.getLogger('tfyarn.am').debug('not shown at INFO')\n")
    assert len(lines) == 3, lines  # setup twice adds no second handler; DEBUG is not shown
    assert all(LINE.match(line) for line in lines), lines
    assert lines[0].endswith(" INFO tfyarn.am: job SUCCEEDED: all 2 worker task(s) succeeded")
    assert " WARNING tfyarn.executor: snapshot failed" in lines[1]
    assert " INFO tfyarn.executor.staging: staged 3 file(s)" in lines[2]


def test_the_format_is_what_logs_help_documents():
    out = CliRunner().invoke(cli, ["logs", "--help"]).output
    example = next(line.strip() for line in out.splitlines() if "tfyarn.executor:" in line)
    assert LINE.match(example.removesuffix(" ...")), example


def test_no_print_left_in_the_am_and_executor():
    """Their messages go through logging; the final status line is the one machine-read print."""
    prints = [f"{path.relative_to(ROOT)}: {text.strip()}"
              for path in sorted((ROOT / "appmaster").rglob("*.py"))
              for text in path.read_text().splitlines() if re.search(r"\bprint\(", text)]
    assert prints == ["appmaster/am/master.py: print(protocol.AM_STATUS_LINE + body, flush=True)"], prints
