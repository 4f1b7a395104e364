"""Click parameter types shared by the commands, and help text that reads its defaults from the job spec."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import click

from tfyarn.errors import SpecError
from tfyarn.fields import parse_duration
from tfyarn.spec import parse_memory, spec_default


class Parsed(click.ParamType):
    """A value one of the spec's parsers reads (a memory size, a duration), converted to its whole number.

    The parser's SpecError, less the name it was given, becomes click's "Invalid value for '--flag'" line.
    """

    def __init__(self, name: str, parse: Callable[[str | int, str], int]) -> None:
        self.name, self.parse = name, parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return self.parse(value, self.name)
        except SpecError as e:
            self.fail(str(e).split(": ", 1)[1], param, ctx)


class KeyValue(click.ParamType):
    """NAME=VALUE."""

    name = "NAME=VALUE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, str]:
        if isinstance(value, tuple):
            return value
        key, sep, val = str(value).partition("=")
        if not sep or not key:
            self.fail(f"{value!r} is not NAME=VALUE", param, ctx)
        return key, val


class ExitCodes(click.ParamType):
    """A comma-separated list of exit codes, e.g. 2,3."""

    name = "N[,N...]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> list[int]:
        if isinstance(value, list):
            return value
        parts = [p.strip() for p in str(value).split(",") if p.strip()]
        # [0-9], not str.isdigit(): that also accepts "²", which int() refuses
        if not parts or not all(re.fullmatch(r"[0-9]{1,3}", p) and 0 < int(p) < 256 for p in parts):
            self.fail(f"{value!r} is not a comma-separated list of exit codes 1-255, e.g. 2,3", param, ctx)
        return [int(p) for p in parts]


class WorkerCount(click.ParamType):
    """N containers, or MIN:MAX for elastic pytorch workers."""

    name = "N|MIN:MAX"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int | tuple[int, int]:
        if isinstance(value, (int, tuple)):
            return value
        text = str(value).strip()
        if m := re.fullmatch(r"([0-9]{1,18})(?::([0-9]{1,18}))?", text):
            if m.group(2) is None:
                return int(m.group(1))
            low, high = int(m.group(1)), int(m.group(2))
            if 1 <= low <= high:
                return low, high
        self.fail(f"{value!r} is not a count (e.g. 4) or MIN:MAX with 1 <= MIN <= MAX (e.g. 2:4)", param, ctx)


def memory_text(mb: int) -> str:
    """MiB written as a memory flag takes it: 2048 -> 2g, 768 -> 768m."""
    return f"{mb // 1024}g" if mb % 1024 == 0 else f"{mb}m"


def default_help(key: str, text: Callable[[Any], str] | None = None) -> str:
    """``[default: X]`` for the flag of spec key ``key``: X is read from the spec, so --help follows it.

    ``text`` words the value; memory keys default to ``memory_text``, others to ``str``.
    """
    word = text or (memory_text if key.endswith("memory_mb") else str)
    return f"[default: {word(spec_default(key))}]"


MEMORY = Parsed("SIZE", parse_memory)  # 512m, 4g -> MiB
DURATION = Parsed("DURATION", parse_duration)  # 90s, 30m, 2h, 1h30m -> seconds
EXIT_CODES = ExitCodes()
KEY_VALUE = KeyValue()
