"""A job's inputs and outputs: what is staged into each container, and what a task publishes.

Part of the typed job spec (tfyarn.spec re-exports these); pure parsing and
checks, nothing here touches a filesystem.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from tfyarn.errors import SpecError
from tfyarn.fields import check_str, check_text, show

INPUT_MODES = ("copy", "shard")
_TASK_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*:[0-9]{1,9}")
_PORT_AFTER_COLON = re.compile(r"^\d+(/|$)")


def split_pair(text: str) -> tuple[str, str]:
    """``hdfs:///data:./data`` -> ("hdfs:///data", "./data"); a port or ``://`` is not a split point."""
    head, sep, tail = text.rpartition(":")
    if not sep or not tail or "/" not in head or tail.startswith("//") or _PORT_AFTER_COLON.match(tail):
        return text, ""
    scheme_end = text.find("://")
    if scheme_end >= 0:  # hdfs://nn:abc/x: a colon in the authority is a (bad) port, not a split point
        path_start = text.find("/", scheme_end + 3)
        if path_start < 0 or len(head) < path_start:
            return text, ""
    return head, tail


def _check_inside(path: Any, what: str, example: str) -> str:
    """A relative dir strictly inside the task's working dir (never the dir itself, never above it)."""
    check_text(path, what)
    if os.path.isabs(path) or ".." in path.split("/") or os.path.normpath(path) == ".":
        raise SpecError(
            f"{what}: {show(path)} must be a relative path to a dir inside the container's working dir, e.g. {example}"
        )
    return path


@dataclass(frozen=True)
class InputSpec:
    """Data staged into containers before the user process starts.

    ``copy``: every container gets all files. ``shard``: each worker task gets
    a disjoint slice of the sorted file list (other roles get all files).
    """

    src: str  # hdfs:// viewfs:// file:// URI or local path
    dest: str = ""  # local dir in the container; default inputs/<basename of src>
    mode: str = "copy"

    @property
    def local_dir(self) -> str:
        return self.dest or os.path.join("inputs", os.path.basename(self.src.rstrip("/")) or "data")

    def validate(self, where: str) -> None:
        from tfyarn.storage.uri import parse_uri  # pure parsing; no filesystem is touched

        parse_uri(check_text(self.src, f"{where}.src"), f"{where}.src")
        if check_str(self.dest, f"{where}.dest"):
            _check_inside(self.dest, f"{where}.dest", "./data")
        elif os.path.basename(self.src.rstrip("/")) in ("", ".", ".."):
            raise SpecError(
                f"{where}.src: {show(self.src)} has no base name to stage it under (inputs/<name>); "
                f"give URI:DIR, e.g. {self.src}:./data"
            )
        if self.mode not in INPUT_MODES:
            raise SpecError(f"{where}.mode: {show(self.mode)} is not one of {', '.join(INPUT_MODES)}")


@dataclass(frozen=True)
class OutputSpec:
    """A local dir a task writes, published to ``dest`` when the task succeeds."""

    src: str  # relative path in the container, e.g. ./model
    dest: str  # hdfs:// viewfs:// file:// URI
    task: str = ""  # which task uploads, ROLE:INDEX; default chief:0, else worker:0

    def validate(self, where: str) -> None:
        from tfyarn.storage.uri import parse_uri

        _check_inside(self.src, f"{where}.src", "./model")
        parse_uri(check_text(self.dest, f"{where}.dest"), f"{where}.dest")
        if self.task and not _TASK_RE.fullmatch(check_str(self.task, f"{where}.task")):
            raise SpecError(f"{where}.task: {show(self.task)} is not ROLE:INDEX, e.g. chief:0")
