"""`tfyarn fetch` on local dirs: the manifest decides what is already there, one sub-dir per output, no escapes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from tfyarn.cli.fetch_cmd import base_name, fetch_into, local_target, unique_subdirs
from tfyarn.storage import list_files, locate, parse_uri
from tfyarn.wire import OutputStatus, StatusDoc

FILES = {"model.bin": 4000, "sub/vocab.txt": 300}


def make_source(root: Path, fill: bytes) -> Path:
    """A tree with FILES' names and sizes, every byte ``fill``: two sources differ only in content."""
    for rel, size in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(fill * size)
    return root


def fetch(src: Path, target: Path):
    loc = locate(parse_uri(str(src)))
    return fetch_into(loc, str(loc.uri), list_files(loc), str(target), threads=2)


def contents(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()
            and p.name != ".tfyarn-fetch.json"}


def test_a_different_source_of_equal_sizes_is_fetched_not_taken_for_already_there(tmp_path):
    a, b = make_source(tmp_path / "a", b"A"), make_source(tmp_path / "b", b"B")
    dest = tmp_path / "dest"
    first, _ = fetch(a, dest)
    assert (first.files, first.skipped) == (2, 0)
    second, _ = fetch(b, dest)
    assert (second.files, second.skipped) == (2, 0)
    assert contents(dest) == contents(b)
    manifest = json.loads((dest / ".tfyarn-fetch.json").read_text())
    assert manifest["source"] == f"file://{b}"
    assert set(manifest["files"]) == set(FILES)


def test_the_same_source_resumes_and_a_changed_file_is_fetched_again(tmp_path):
    a = make_source(tmp_path / "a", b"A")
    dest = tmp_path / "dest"
    fetch(a, dest)
    again, _ = fetch(a, dest)
    assert (again.files, again.skipped) == (0, 2)
    (dest / "model.bin").write_bytes(b"X" * FILES["model.bin"])  # edited here, same size
    os.utime(a / "sub" / "vocab.txt", ns=(1, 1))  # re-published there, same size
    third, _ = fetch(a, dest)
    assert (third.files, third.skipped) == (2, 0)
    assert contents(dest) == contents(a)


def test_files_left_by_another_source_are_removed_unless_edited(tmp_path):
    a, b = make_source(tmp_path / "a", b"A"), make_source(tmp_path / "b", b"B")
    (a / "extra").mkdir()
    (a / "extra" / "ckpt-5").write_bytes(b"old")
    (a / "notes").write_bytes(b"old notes")
    dest = tmp_path / "dest"
    fetch(a, dest)
    (dest / "notes").write_bytes(b"mine now")  # the user edited it: not tfyarn's to delete
    (dest / "own").write_bytes(b"the user's")  # never fetched: not tfyarn's either
    _, removed = fetch(b, dest)
    assert removed == 1
    assert contents(dest) == {**contents(b), "notes": b"mine now", "own": b"the user's"}
    assert not (dest / "extra").exists()  # the dir it emptied is gone too


def test_a_broken_manifest_trusts_nothing(tmp_path):
    a = make_source(tmp_path / "a", b"A")
    dest = tmp_path / "dest"
    fetch(a, dest)
    (dest / ".tfyarn-fetch.json").write_text("{not json")
    again, _ = fetch(a, dest)
    assert (again.files, again.skipped) == (2, 0)


@pytest.mark.parametrize("uri", ["hdfs:///x/..", "hdfs:///x/../", "hdfs:///x/.", "hdfs:///", "hdfs://nn:8020",
                                 "/tmp/x/..", ".."])
def test_uris_that_name_no_dir_of_their_own_have_no_base_name(uri):
    assert base_name(uri) is None


def test_each_output_gets_its_own_subdir():
    assert unique_subdirs(["hdfs:///a/model"]) == [""]  # one output: DEST itself
    assert unique_subdirs(["hdfs:///a/model", "hdfs:///b/model/", "hdfs:///c/model-2", "hdfs:///d/logs"]) == \
        ["model", "model-3", "model-2", "logs"]


def test_a_subdir_can_never_resolve_outside_dest(tmp_path):
    dest = tmp_path / "dest"
    dest.mkdir()
    assert local_target(str(dest), "model") == str(dest / "model")
    with pytest.raises(click.ClickException, match="outside"):
        local_target(str(dest), "..")
    (dest / "link").symlink_to(tmp_path)
    with pytest.raises(click.ClickException, match="outside"):
        local_target(str(dest), "link")


def test_the_cli_refuses_a_source_ending_in_dotdot_with_one_error_line(tmp_path):
    (tmp_path / "x").mkdir()
    res = subprocess.run([sys.executable, "-m", "tfyarn", "fetch", f"file://{tmp_path}/x/..", str(tmp_path / "d")],
                         capture_output=True, text=True)
    assert res.returncode == 2
    assert res.stderr.startswith("Error: ") and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "'..'" in res.stderr and not (tmp_path / "d").exists()


class FakeClient:
    """Stands in for YARN: a SUCCEEDED job that declared ``outputs`` (file:// URIs, so the fetch itself is real)."""

    outputs: list[str] = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def report(self, app):
        return type("Report", (), {"state": type("State", (), {"value": "SUCCEEDED"})})()

    def status_doc(self, app):
        return StatusDoc(app_id=app, state="SUCCEEDED", outputs=tuple(OutputStatus(src="out", dest=d) for d in self.outputs))


APP = "application_1712345678901_0042"


def run_fetch(monkeypatch, outputs, dest):
    from click.testing import CliRunner

    import tfyarn.client
    from tfyarn.cli.fetch_cmd import fetch as fetch_command

    monkeypatch.setattr(FakeClient, "outputs", outputs)
    monkeypatch.setattr(tfyarn.client, "Client", FakeClient)
    return CliRunner().invoke(fetch_command, [APP, str(dest)])


def test_two_outputs_with_one_base_name_land_in_two_subdirs(tmp_path, monkeypatch):
    a, b = make_source(tmp_path / "a" / "model", b"A"), make_source(tmp_path / "b" / "model", b"B")
    res = run_fetch(monkeypatch, [f"file://{a}", f"file://{b}"], tmp_path / "dest")
    assert res.exit_code == 0, res.output
    assert contents(tmp_path / "dest" / "model") == contents(a)
    assert contents(tmp_path / "dest" / "model-2") == contents(b)


def test_an_output_ending_in_dotdot_is_refused_before_anything_is_fetched(tmp_path, monkeypatch):
    a = make_source(tmp_path / "a" / "model", b"A")
    res = run_fetch(monkeypatch, [f"file://{a}", f"file://{tmp_path}/b/.."], tmp_path / "dest")
    assert res.exit_code == 1
    assert "names no dir of its own" in res.output and not (tmp_path / "dest").exists()
