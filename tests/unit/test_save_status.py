"""The AM's final status on HDFS: renamed into place once whole, and tried again when a write fails."""
from __future__ import annotations

import pyarrow.fs as pafs
import pytest

import tfyarn.storage
from appmaster.am import master
from tfyarn import protocol
from tfyarn.storage.fs import Location


class FlakyFS:
    """The local filesystem, except that the first ``fails`` opens for writing raise as hdfs-native does."""

    def __init__(self, fails: int):
        self.local, self.fails, self.opened = pafs.LocalFileSystem(), fails, []

    def open_output_stream(self, path, *a, **kw):
        self.opened.append(path)
        if len(self.opened) <= self.fails:
            raise OSError("Connection refused (os error 111)")
        return self.local.open_output_stream(path, *a, **kw)

    def __getattr__(self, name):
        return getattr(self.local, name)


def flaky(monkeypatch, fails: int) -> FlakyFS:
    fs = FlakyFS(fails)
    real = tfyarn.storage.locate
    monkeypatch.setattr(tfyarn.storage, "locate", lambda uri: Location(uri, fs) if real(uri) else None)
    return fs


@pytest.fixture
def job_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(protocol, "job_dir", lambda user, app_id: str(tmp_path / user / app_id))
    monkeypatch.setattr(master.time, "sleep", lambda s: None)
    return tmp_path / "u" / "application_1_0001"


def test_the_status_lands_whole_and_no_part_file_is_left(job_dir):
    master.save_status('{"state": "SUCCEEDED"}', "u", "application_1_0001")
    assert (job_dir / protocol.STATUS_FILE).read_text() == '{"state": "SUCCEEDED"}'
    assert [p.name for p in job_dir.iterdir()] == [protocol.STATUS_FILE]


def test_a_failed_write_is_tried_again_and_never_leaves_an_empty_status(job_dir, monkeypatch):
    fs = flaky(monkeypatch, fails=2)
    master.save_status("{}", "u", "application_1_0001")
    assert len(fs.opened) == 3 and all(p.endswith(".tfyarn-part") for p in fs.opened)
    assert (job_dir / protocol.STATUS_FILE).read_text() == "{}"


def test_it_gives_up_after_its_attempts(job_dir, monkeypatch):
    flaky(monkeypatch, fails=5)
    with pytest.raises(OSError, match="Connection refused"):
        master.save_status("{}", "u", "application_1_0001", attempts=2)
    assert not (job_dir / protocol.STATUS_FILE).exists()
