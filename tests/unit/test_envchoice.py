"""python_env auto: local where the local cluster's nodes see this interpreter, else shipped, else a warning."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tfyarn import envchoice, pyenv
from tfyarn.cluster.layout import ClusterLayout


def test_this_process_sees_everything_it_needs() -> None:
    assert envchoice.unseen(os.getpid(), envchoice.needed_paths()) is None


def test_a_process_with_a_mount_over_a_path_does_not_see_it(tmp_path: Path) -> None:
    """Through /proc/<pid>/root, as a NodeManager in a mount namespace of its own would be looked at."""
    hidden = tmp_path / "venv"
    hidden.mkdir()
    (hidden / "pyvenv.cfg").write_text("home = /usr/bin\n")
    ready = tmp_path / "ready"
    proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                             f"mount -t tmpfs none {hidden} && touch {ready} && sleep 60"])
    try:
        deadline = time.monotonic() + 20
        while not ready.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "unshare + mount did not come up"
            time.sleep(0.05)
        child = int(subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()[0])
        assert envchoice.unseen(child, [str(tmp_path), str(hidden)]) == str(hidden)
        assert envchoice.unseen(child, [str(tmp_path)]) is None
    finally:
        proc.kill()
        proc.wait()


def test_a_cluster_that_is_not_the_local_one_gets_the_environment_shipped(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(envchoice, "pack_problem", lambda: None)
    got = envchoice.choose(tmp_path / "some-conf")
    assert (got.python_env, got.warning) == ("packed", "")
    assert got.line() == (f"python_env auto: packed (the cluster is not this machine's local one; this environment "
                          f"{sys.prefix} is shipped)")


def test_no_config_known_is_treated_as_another_cluster(monkeypatch) -> None:
    monkeypatch.setattr(envchoice, "pack_problem", lambda: None)
    assert envchoice.choose(None).python_env == "packed"


def test_the_local_cluster_whose_nodes_see_this_python_runs_it(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("TFYARN_CLUSTER_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(envchoice, "local_nodemanagers", lambda conf: {1: os.getpid(), 2: os.getpid()})
    got = envchoice.choose(ClusterLayout().conf_dir)
    assert (got.python_env, got.warning) == ("local", "")


def test_a_local_node_that_cannot_see_it_makes_it_shipped(monkeypatch) -> None:
    monkeypatch.setattr(envchoice, "local_nodemanagers", lambda conf: {1: 101, 2: 102})
    monkeypatch.setattr(envchoice, "unseen", lambda pid, paths: "/tmp/venv" if pid == 102 else None)
    monkeypatch.setattr(envchoice, "pack_problem", lambda: None)
    got = envchoice.choose(Path("/x"))
    assert got.python_env == "packed"
    assert got.reason.startswith("the local cluster's node 2 does not see /tmp/venv; ")


def test_an_environment_that_cannot_be_shipped_runs_locally_with_a_warning(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(envchoice, "pack_problem", lambda: "cannot ship editable installs (foo)")
    got = envchoice.choose(tmp_path)
    assert got.python_env == "local"
    assert got.warning.startswith(f"python_env auto: containers will run {sys.executable}, which every node needs")
    assert "(cannot ship editable installs (foo))" in got.warning and "--python-env ENV.tar.gz" in got.warning


def test_the_local_cluster_is_recognised_by_its_config_dir(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("TFYARN_CLUSTER_DIR", str(tmp_path / "c"))
    assert envchoice.local_nodemanagers(tmp_path / "elsewhere") is None
    assert envchoice.local_nodemanagers(ClusterLayout().conf_dir) == {}  # set up, but no NodeManager runs


def test_pack_problem_names_a_python_that_is_no_environment(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.setattr(sys, "base_prefix", str(tmp_path))
    assert envchoice.pack_problem() == (f"needs a virtualenv or a conda env, and {tmp_path} is neither; run tfyarn "
                                        "from one (python -m venv ...)")


def test_a_conda_env_is_one_to_pack(monkeypatch, tmp_path) -> None:
    (tmp_path / pyenv.CONDA_META).mkdir()
    (tmp_path / pyenv.CONDA_META / "numpy-2.0.0-py311_0.json").write_text("{}")
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.setattr(sys, "base_prefix", str(tmp_path))
    monkeypatch.setattr(pyenv, "_site_dirs", lambda: [str(tmp_path / "lib")])
    assert pyenv.is_conda(str(tmp_path))
    first = pyenv.fingerprint()
    (tmp_path / pyenv.CONDA_META / "numpy-2.0.0-py311_0.json").rename(tmp_path / pyenv.CONDA_META / "numpy-2.1.0-py311_0.json")
    assert pyenv.fingerprint() != first  # another conda package build: another cache key


def test_without_conda_pack_a_conda_env_is_refused_with_the_install_line(monkeypatch, tmp_path) -> None:
    (tmp_path / pyenv.CONDA_META).mkdir()
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    monkeypatch.setitem(sys.modules, "conda_pack", None)  # import fails
    with pytest.raises(pyenv.SpecError, match=r"is a conda env, and shipping one needs conda-pack; `pip install conda-pack`"):
        pyenv._local_archive(pyenv.PackedEnv("hdfs:///x", "fp"), str(tmp_path), lambda _m: None)
