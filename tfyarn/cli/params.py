"""Click parameter types shared by the commands."""
from __future__ import annotations

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


MEMORY = Memory()
KEY_VALUE = KeyValue()
