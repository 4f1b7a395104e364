"""`down --purge` deletes only a dir that `up` marked as a cluster dir."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tfyarn.cli.main import cli
from tfyarn.cluster import clusterdir, local
from tfyarn.cluster.layout import ClusterLayout
from tfyarn.cluster.local import LocalCluster
from tfyarn.cluster.scripts import write_scripts


def tfyarn(root: Path, *args: str):
    runner = CliRunner()
    return runner.invoke(cli, ["cluster", "--dir", str(root), *args], prog_name="tfyarn")


def home_like(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("secret\n")
    (home / "thesis.tex").write_text("years of work\n")
    return home


def legacy_layout(root: Path, tmp_path: Path) -> ClusterLayout:
    """What `up` wrote into a cluster dir before the marker existed."""
    layout = ClusterLayout(root=root, jar_cache=tmp_path / "jars")
    LocalCluster(layout).write_config()
    for d in (layout.pid_dir, layout.log_dir, layout.nm_local_dir, layout.data_dir / "namenode"):
        d.mkdir(parents=True, exist_ok=True)
    (layout.log_dir / "namenode.log").write_text("log\n")
    return layout


def test_purge_refuses_a_dir_without_the_marker_and_deletes_nothing(tmp_path):
    home = home_like(tmp_path)
    res = tfyarn(home, "down", "--purge")
    assert res.exit_code == 1
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ")
    assert "does not look like a tfyarn cluster dir" in lines[0] and "nothing was stopped or deleted" in lines[0]
    assert (home / "thesis.tex").read_text() == "years of work\n"
    assert (home / ".ssh" / "id_ed25519").exists()


def test_purge_refuses_a_tfyarn_layout_without_the_marker(tmp_path):
    """Strict: a layout by tfyarn shows tfyarn wrote there, not that nothing else lives there."""
    layout = legacy_layout(tmp_path / "old", tmp_path)
    assert tfyarn(layout.root, "down", "--purge").exit_code == 1
    assert (layout.conf_dir / "yarn-site.xml").exists()


def test_purge_deletes_a_marked_dir(tmp_path):
    root = tmp_path / "cluster"
    assert clusterdir.claim(root)
    (root / "data" / "namenode").mkdir(parents=True)
    (root / "data" / "namenode" / "fsimage").write_text("x")
    res = tfyarn(root, "down", "--purge")
    assert res.exit_code == 0, res.output
    assert not root.exists() and f"Deleted {root}." in res.output


def test_purge_of_a_missing_dir_deletes_nothing_and_succeeds(tmp_path):
    res = tfyarn(tmp_path / "never", "down", "--purge")
    assert res.exit_code == 0 and "Nothing to delete" in res.output


def test_purge_through_a_symlink_empties_the_target_and_keeps_the_link(tmp_path):
    target = tmp_path / "big-disk" / "cluster"
    assert clusterdir.claim(target)
    (target / "logs").mkdir()
    (target / "logs" / "x.log").write_text("x")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("keep")
    (target / "escape").symlink_to(outside)  # a link inside is removed, not followed
    link = tmp_path / "link"
    link.symlink_to(target)
    assert tfyarn(link, "down", "--purge").exit_code == 0
    assert link.is_symlink() and target.is_dir() and list(target.iterdir()) == []
    assert (outside / "keep").exists()


@pytest.mark.parametrize("make", ["missing", "empty"])
def test_up_marks_a_new_or_empty_dir(tmp_path, make):
    root = tmp_path / "cluster"
    if make == "empty":
        root.mkdir()
    assert clusterdir.claim(root) and clusterdir.is_cluster_dir(root)


def test_up_marks_a_cluster_dir_from_before_the_marker(tmp_path):
    layout = legacy_layout(tmp_path / "old", tmp_path)
    assert clusterdir.claim(layout.root) and clusterdir.is_cluster_dir(layout.root)


@pytest.mark.parametrize("extra", ["README", "bin/deploy.sh", "conf/secrets.env", "data/photos"])
def test_up_does_not_mark_a_tfyarn_layout_with_anything_else_in_it(tmp_path, extra):
    layout = legacy_layout(tmp_path / "old", tmp_path)
    (layout.root / extra).write_text("mine\n")
    assert not clusterdir.claim(layout.root)
    assert not (layout.root / clusterdir.MARKER_NAME).exists()


def test_up_does_not_mark_a_look_alike_layout_whose_scripts_tfyarn_did_not_write(tmp_path):
    root = tmp_path / "app"
    for d in ("bin", "conf", "data", "logs"):
        (root / d).mkdir(parents=True)
    (root / "bin" / "yarn").write_text("#!/bin/sh\n# the app's own yarn\n")
    assert not clusterdir.claim(root)


def test_a_symlinked_or_foreign_marker_does_not_count(tmp_path):
    root = home_like(tmp_path)
    (tmp_path / "m").write_text(clusterdir.MARKER_TEXT)
    (root / clusterdir.MARKER_NAME).symlink_to(tmp_path / "m")
    assert not clusterdir.is_cluster_dir(root)
    (root / clusterdir.MARKER_NAME).unlink()
    (root / clusterdir.MARKER_NAME).write_text("something else\n")
    assert not clusterdir.is_cluster_dir(root)


class Stop(Exception):
    pass


def _stop(*_args, **_kw):
    raise Stop


def test_up_marks_the_dir_before_it_writes_anything(tmp_path, monkeypatch):
    monkeypatch.setattr(local, "ensure_jars", _stop)
    root = tmp_path / "cluster"
    with pytest.raises(Stop):
        LocalCluster(ClusterLayout(root=root, jar_cache=tmp_path / "jars")).up(print)
    assert clusterdir.is_cluster_dir(root)


def test_up_in_a_home_dir_says_purge_will_refuse_it_and_writes_no_marker(tmp_path, monkeypatch):
    monkeypatch.setattr(local, "ensure_jars", _stop)
    home = home_like(tmp_path)
    said: list[str] = []
    with pytest.raises(Stop):
        LocalCluster(ClusterLayout(root=home, jar_cache=tmp_path / "jars")).up(said.append)
    assert not (home / clusterdir.MARKER_NAME).exists()
    assert len(said) == 1 and "down --purge` will refuse" in said[0]


def test_scripts_alone_make_a_legacy_layout(tmp_path):
    """The legacy check reads the header that write_scripts puts on every script."""
    layout = ClusterLayout(root=tmp_path / "c", jar_cache=tmp_path / "jars")
    assert all(clusterdir._written_by_up(p) for p in write_scripts(layout))
