"""The AM's and the executor's start do not load setuptools through skein's `distutils` import (issue 19).

A regression guard that needs no timing: each container process is started
as YARN starts it (``python -m ...``, here without its environment, so it
stops right after its imports) and its ``-X importtime`` record is read.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from appmaster.skeinimport import LooseVersion


def imported(module: str) -> set[str]:
    res = subprocess.run([sys.executable, "-X", "importtime", "-m", module], capture_output=True, text=True,
                         timeout=120, env={"PATH": "/usr/bin:/bin"}, cwd="/")
    names = {line.split("|")[-1].strip() for line in res.stderr.splitlines() if line.startswith("import time:")}
    assert "skein" in names, res.stderr[-2000:]  # it got as far as its imports
    return names


@pytest.mark.parametrize("module", ["appmaster.executor", "appmaster.am"])
def test_a_container_process_imports_skein_without_setuptools(module):
    names = imported(module)
    assert not {n for n in names if n.split(".")[0] in ("setuptools", "pkg_resources")}, sorted(names)
    assert "distutils.dist" not in names


def test_the_stand_in_compares_versions_as_skein_does():
    assert not LooseVersion("1.85.4") < "1.18.0"
    assert LooseVersion("1.9.1") < "1.18.0" and LooseVersion("1.18.0") == "1.18.0"
    assert LooseVersion("2.0") > LooseVersion("1.99.99")
