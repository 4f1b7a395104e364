"""A command's script that nothing ships is refused at submit, naming the flag that ships it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tfyarn.errors import SpecError
from tfyarn.scripts import check_shipped, local_scripts
from tfyarn.spec import JobSpec, RoleSpec


def spec(*command: str, files: tuple[str, ...] = ()) -> JobSpec:
    return JobSpec(name="demo", command=command, roles={"worker": RoleSpec("worker")}, files=files)


@pytest.fixture
def here(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text("print(1)\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print(2)\n")
    (tmp_path / "run").write_text("#!/bin/sh\n")
    return tmp_path


def test_scripts_named_by_relative_paths_that_exist_here(here: Path) -> None:
    assert local_scripts(("python", "train.py", "--lr", "0.1"), str(here)) == ["train.py"]
    assert local_scripts(("torchrun", "--nproc-per-node", "2", "src/main.py"), str(here)) == ["src/main.py"]
    assert local_scripts(("./run",), str(here)) == ["./run"]
    assert local_scripts(("python", "-m", "mypkg.train"), str(here)) == []
    assert local_scripts(("python", "missing.py"), str(here)) == []  # not here: perhaps on the nodes
    assert local_scripts(("python", str(here / "train.py")), str(here)) == []  # absolute: a shared path


def test_an_unshipped_script_is_refused_with_both_flags(here: Path) -> None:
    with pytest.raises(SpecError) as e:
        check_shipped(spec("python", "train.py"), "", str(here))
    assert str(e.value) == (f"command: train.py is a file in {here}, which the containers do not get (each runs in "
                            "a dir of its own); add --file train.py (ships the file) or --code . (ships this dir)")


def test_a_script_in_a_subdir_needs_the_code_dir(here: Path) -> None:
    with pytest.raises(SpecError, match=r"command: src/main.py is a file in .*; add --code \. \(ships this dir\)$"):
        check_shipped(spec("python", "src/main.py"), "", str(here))


def test_shipped_scripts_pass(here: Path) -> None:
    check_shipped(spec("python", "train.py", files=(str(here / "train.py"),)), "", str(here))
    check_shipped(spec("python", "src/main.py", files=(str(here / "src"),)), "", str(here))
    check_shipped(spec("python", "src/main.py"), str(here), str(here))  # the code dir is here
    check_shipped(spec("python", "-c", "print(1)"), "", str(here))
