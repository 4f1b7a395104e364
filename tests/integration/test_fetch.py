"""Publishing and fetching on the real HDFS never lose or mix data."""
from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import TFYARN, hadoop
from tfyarn.errors import StorageError
from tfyarn.storage import locate, parse_uri, publish

BASE = f"/user/{os.environ.get('USER', 'root')}/it-fetch-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def base(cluster) -> Iterator[str]:
    yield BASE
    hadoop(cluster, "hdfs", "dfs", "-rm", "-r", "-f", "-skipTrash", BASE)


def hdfs_ls(cluster, remote: str) -> str:
    res = hadoop(cluster, "hdfs", "dfs", "-ls", "-R", remote)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_publish_keeps_an_output_another_job_wrote_to_the_destination_during_the_upload(cluster, base, tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "weights").write_bytes(os.urandom(3 * 2**20))
    dest = locate(parse_uri(f"hdfs://{base}/race/run1"))

    def other_job_publishes(done: int, total: int) -> None:  # runs while our upload is under way
        if not dest.exists():
            dest.fs.create_dir(dest.path)
            with dest.fs.open_output_stream(dest.path + "/theirs", compression=None) as f:
                f.write(b"the other job's model")

    with pytest.raises(StorageError, match="appeared while this job was uploading.*--overwrite"):
        publish(locate(parse_uri(str(model))), dest, "application_1_0001", progress=other_job_publishes)
    cat = hadoop(cluster, "hdfs", "dfs", "-cat", f"{base}/race/run1/theirs")
    assert cat.stdout == "the other job's model"
    listing = hdfs_ls(cluster, f"{base}/race")
    assert "weights" not in listing and "_tfyarn_tmp_" not in listing, listing


def test_fetching_a_second_source_of_equal_names_and_sizes_copies_its_bytes(cluster, base, tmp_path):
    for name, fill in (("a", b"A"), ("b", b"B")):
        (tmp_path / name / "sub").mkdir(parents=True)
        (tmp_path / name / "model.bin").write_bytes(fill * 5000)
        (tmp_path / name / "sub" / "vocab").write_bytes(fill * 70)
    assert hadoop(cluster, "hdfs", "dfs", "-mkdir", "-p", f"{base}/src").returncode == 0
    put = hadoop(cluster, "hdfs", "dfs", "-put", str(tmp_path / "a"), str(tmp_path / "b"), f"{base}/src/")
    assert put.returncode == 0, put.stderr
    dest = tmp_path / "dest"
    first = subprocess.run([*TFYARN, "fetch", f"hdfs://{base}/src/a", str(dest)], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    second = subprocess.run([*TFYARN, "fetch", f"hdfs://{base}/src/b", str(dest)], capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert "Fetched 2 file(s)" in second.stdout and "already there" not in second.stdout, second.stdout
    assert (dest / "model.bin").read_bytes() == b"B" * 5000
    assert (dest / "sub" / "vocab").read_bytes() == b"B" * 70
    third = subprocess.run([*TFYARN, "fetch", f"hdfs://{base}/src/b", str(dest)], capture_output=True, text=True)
    assert "Fetched 0 file(s)" in third.stdout and "(2 already there)" in third.stdout, third.stdout


def test_fetch_refuses_a_source_ending_in_dotdot(cluster, base, tmp_path: Path):
    res = subprocess.run([*TFYARN, "fetch", f"hdfs://{base}/src/a/..", str(tmp_path / "dest")],
                         capture_output=True, text=True)
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.startswith("Error: ") and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert not (tmp_path / "dest").exists()


def test_publish_with_overwrite_and_mirror_replace_what_is_on_hdfs(cluster, base, tmp_path):
    """The old tree goes aside and the new one in (HDFS's rename never replaces); a grown file is re-mirrored."""
    from tfyarn.storage import mirror

    old, new = tmp_path / "old", tmp_path / "new"
    (old / "d").mkdir(parents=True)
    (old / "d" / "stale").write_bytes(b"old")
    new.mkdir()
    (new / "events").write_bytes(b"a" * 10)
    dest = locate(parse_uri(f"hdfs://{base}/over/run1"))
    publish(locate(parse_uri(str(old))), dest, "application_1_0002")
    publish(locate(parse_uri(str(new))), dest, "application_1_0003", overwrite=True)
    listing = hdfs_ls(cluster, f"{base}/over")
    assert "stale" not in listing and "_tfyarn_" not in listing and f"{base}/over/run1/events" in listing, listing
    with open(new / "events", "ab") as f:
        f.write(b"b" * 5)
    assert mirror(locate(parse_uri(str(new))), dest) == 1
    assert hadoop(cluster, "hdfs", "dfs", "-cat", f"{base}/over/run1/events").stdout == "a" * 10 + "b" * 5
    assert "tfyarn-part" not in hdfs_ls(cluster, f"{base}/over")
