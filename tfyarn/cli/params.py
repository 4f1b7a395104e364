"""Click parameter types shared by the commands."""
from __future__ import annotations

import re
from typing import Any

import click

from tfyarn.errors import SpecError
from tfyarn.spec import parse_memory


class Memory(click.ParamType):
    """A memory size such as 512m or 4g, converted to MiB."""

    name = "SIZE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_memory(value, "memory")
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


MEMORY = Memory()
EXIT_CODES = ExitCodes()
KEY_VALUE = KeyValue()
