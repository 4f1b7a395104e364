"""skein without setuptools' distutils: about 70 ms of CPU off every container's start.

skein.utils imports ``distutils.version`` for one comparison (gRPC's version
against '1.18.0', when it creates a client). Where setuptools' distutils shim
is installed (``_distutils_hack``), that import loads setuptools' distutils and
much of setuptools: about 70 ms of CPU per process (``python -X importtime``),
paid by the executor of every task and by the AM, on the start's critical
path and, on a small node, on the training's cores. ``prepare()`` registers a
minimal ``distutils.version`` holding that one class before skein is imported,
unless a distutils is imported already. Only the AM's and the executor's own
processes call it (their ``__main__``); the user's command never sees it.
"""

from __future__ import annotations

import functools
import re
import sys
import types
from typing import Any


@functools.total_ordering
class LooseVersion:
    """Versions compared by their numeric parts, e.g. '1.62.3' > '1.18.0' (what skein asks)."""

    def __init__(self, text: str) -> None:
        self.text = str(text)
        self.parts = tuple(int(p) for p in re.findall(r"\d+", self.text))

    @staticmethod
    def _parts(other: Any) -> tuple[int, ...]:
        return other.parts if isinstance(other, LooseVersion) else LooseVersion(other).parts

    def __lt__(self, other: Any) -> bool:
        return self.parts < self._parts(other)

    def __eq__(self, other: object) -> bool:
        return self.parts == self._parts(other)

    def __hash__(self) -> int:
        return hash(self.parts)

    def __repr__(self) -> str:
        return f"LooseVersion({self.text!r})"


def prepare() -> None:
    """Before anything imports skein: a stand-in ``distutils.version`` unless distutils is loaded already."""
    if "distutils" in sys.modules or "distutils.version" in sys.modules:
        return
    package = types.ModuleType("distutils", "tfyarn's stand-in: only distutils.version.LooseVersion")
    package.__path__ = []  # a package with no submodules of its own
    version = types.ModuleType("distutils.version")
    version.LooseVersion = LooseVersion  # type: ignore[attr-defined]
    package.version = version  # type: ignore[attr-defined]
    sys.modules["distutils"], sys.modules["distutils.version"] = package, version
