"""The storage layer on the local filesystem (the same code paths serve HDFS; see the integration tests)."""
import os

import pyarrow.fs as pafs
import pytest
from fsspec.implementations.local import LocalFileSystem

from tfyarn.errors import SpecError, StorageError
from tfyarn.spec import split_pair
from tfyarn.storage import Location, copy_tree, list_files, locate, mirror, parse_uri, publish, shard


@pytest.mark.parametrize("text,scheme,authority,path", [
    ("hdfs:///data/x", "hdfs", "", "/data/x"),
    ("hdfs://nn:8020/data/x/", "hdfs", "nn:8020", "/data/x"),
    ("viewfs://cluster/a/b", "viewfs", "cluster", "/a/b"),
    ("file:///tmp/x", "file", "", "/tmp/x"),
    ("/tmp/y", "file", "", "/tmp/y"),
])
def test_parse_uri(text, scheme, authority, path):
    u = parse_uri(text)
    assert (u.scheme, u.authority, u.path) == (scheme, authority, path)


@pytest.mark.parametrize("text,msg", [
    ("s3://bucket/x", "has scheme 's3'"), ("hdfs:relative", "is not a URI"), ("", "empty path"),
    ("file://host/x", "file URIs have no host"), ("hdfs://:8020/x", "has a port but no host"),
])
def test_malformed_uris_are_named(text, msg):
    with pytest.raises(SpecError, match=msg):
        parse_uri(text, "--input")


def test_split_pair_knows_ports_and_schemes():
    assert split_pair("hdfs:///data:./d") == ("hdfs:///data", "./d")
    assert split_pair("hdfs://nn:8020/data") == ("hdfs://nn:8020/data", "")
    assert split_pair("hdfs://nn:8020/data:out") == ("hdfs://nn:8020/data", "out")
    assert split_pair("hdfs:///data") == ("hdfs:///data", "")


def make_tree(root, n=7):
    for i in range(n):
        d = root / f"d{i % 3}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}").write_bytes(os.urandom(1000 + i))
    return root


def test_copy_tree_is_complete_verified_and_resumable(tmp_path):
    src = make_tree(tmp_path / "src")
    dst = tmp_path / "dst"
    report = copy_tree(locate(parse_uri(str(src))), locate(parse_uri(str(dst))), threads=3)
    assert report.files == 7 and report.skipped == 0
    for f in src.rglob("f*"):
        assert (dst / f.relative_to(src)).read_bytes() == f.read_bytes()
    assert not list(dst.rglob("*.tfyarn-part"))
    (dst / "d0" / "f0").unlink()
    again = copy_tree(locate(parse_uri(str(src))), locate(parse_uri(str(dst))))
    assert (again.files, again.skipped) == (1, 6)


def test_shards_are_disjoint_and_cover_the_sorted_list(tmp_path):
    files = list_files(locate(parse_uri(str(make_tree(tmp_path / "s", 10)))))
    parts = [shard(files, i, 3) for i in range(3)]
    names = [f.rel for p in parts for f in p]
    assert sorted(names) == [f.rel for f in files] and len(set(names)) == 10


def test_publish_is_atomic_and_refuses_to_overwrite(tmp_path):
    src = make_tree(tmp_path / "model", 3)
    dest = tmp_path / "out" / "run1"
    publish(locate(parse_uri(str(src))), locate(parse_uri(str(dest))), "app_1")
    assert sorted(p.name for p in dest.rglob("f*")) == ["f0", "f1", "f2"]
    assert [p.name for p in dest.parent.iterdir()] == ["run1"]  # no staging sibling left
    with pytest.raises(StorageError, match="already exists"):
        publish(locate(parse_uri(str(src))), locate(parse_uri(str(dest))), "app_2")


class FailingReads(LocalFileSystem):
    """The local filesystem, except that reading f1 always fails (a stand-in for a lost DataNode)."""

    def _open(self, path, mode="rb", **kw):
        if "r" in mode and path.endswith("/f1"):
            raise OSError("injected read failure")
        return super()._open(path, mode=mode, **kw)


def test_a_failed_publish_leaves_nothing_at_the_destination(tmp_path):
    src = make_tree(tmp_path / "model", 3)
    flaky = Location(parse_uri(str(src)), pafs.PyFileSystem(pafs.FSSpecHandler(FailingReads())))
    dest = tmp_path / "out" / "run1"
    with pytest.raises(StorageError, match="1 file\\(s\\) failed to copy .* injected read failure"):
        publish(flaky, locate(parse_uri(str(dest))), "app_1")
    assert not dest.exists()
    assert list((tmp_path / "out").iterdir()) == []  # the hidden staging sibling is gone too


def test_missing_source_is_an_error(tmp_path):
    with pytest.raises(StorageError, match="does not exist"):
        list_files(locate(parse_uri(str(tmp_path / "nope"))))
    assert locate(parse_uri(str(tmp_path))).info().type == pafs.FileType.Directory


def test_compressed_files_are_copied_byte_for_byte(tmp_path):
    """pyarrow decompresses *.gz on open unless told not to; staging must never change bytes."""
    import gzip

    src = tmp_path / "src"
    src.mkdir()
    (src / "data.csv.gz").write_bytes(gzip.compress(b"a,b\n" * 10000))
    copy_tree(locate(parse_uri(str(src))), locate(parse_uri(str(tmp_path / "dst"))))
    assert (tmp_path / "dst" / "data.csv.gz").read_bytes() == (src / "data.csv.gz").read_bytes()


def test_mirror_copies_new_and_grown_files_only(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    (src / "run").mkdir(parents=True)
    (src / "run" / "events").write_bytes(b"a" * 10)
    (src / "other").write_bytes(b"b")
    src_loc, dst_loc = locate(parse_uri(str(src))), locate(parse_uri(str(dst)))
    assert mirror(src_loc, dst_loc) == 2
    assert mirror(src_loc, dst_loc) == 0  # nothing changed
    with open(src / "run" / "events", "ab") as f:
        f.write(b"c" * 5)
    assert mirror(src_loc, dst_loc) == 1
    assert (dst / "run" / "events").read_bytes() == b"a" * 10 + b"c" * 5
    assert not list(dst.rglob("*.tfyarn-part"))
