"""The storage layer on the local filesystem (the same code paths serve HDFS; see the integration tests)."""
import os

import pyarrow.fs as pafs
import pytest
from fsspec.implementations.local import LocalFileSystem

from tfyarn.errors import SpecError, StorageError
from tfyarn.spec import split_pair
from tfyarn import storage
from tfyarn.storage import Location, copy_tree, list_files, locate, mirror, parse_uri, publish, put_file, shard


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


def siblings(dest):
    return sorted(p.name for p in dest.parent.iterdir())


def test_publish_fails_and_keeps_a_destination_that_appears_during_the_upload(tmp_path):
    """Another job publishes to the same path while this one uploads: its output must survive, ours is dropped."""
    src = make_tree(tmp_path / "model", 3)
    dest = tmp_path / "out" / "run1"

    def other_job_publishes(done, total):
        if not dest.exists():
            dest.mkdir(parents=True)
            (dest / "theirs").write_bytes(b"other job's model")

    with pytest.raises(StorageError, match=r"run1 appeared while this job was uploading.*--overwrite"):
        publish(locate(parse_uri(str(src))), locate(parse_uri(str(dest))), "app_1", progress=other_job_publishes)
    assert [p.name for p in dest.iterdir()] == ["theirs"]
    assert (dest / "theirs").read_bytes() == b"other job's model"
    assert siblings(dest) == ["run1"]  # our hidden staging sibling is gone


class ClassicRename(LocalFileSystem):
    """Local files with HDFS's classic rename (libhdfs): a dir renamed onto a dir lands inside it.

    ``race`` makes "another job" create the destination just before a rename
    onto it, after publish's last check; ``fail`` makes such a rename fail.
    """

    cachable = False  # fsspec would otherwise hand back one shared instance
    race: str | None = None
    fail: str | None = None

    def mv(self, path1, path2, **kw):
        if path2 == self.race and not os.path.exists(path2):
            os.makedirs(path2)
            with open(os.path.join(path2, "theirs"), "wb") as f:
                f.write(b"other job's model")
        if path2 == self.fail and "_tfyarn_tmp_" in path1:
            raise OSError("injected rename failure")
        if os.path.isdir(path2):
            path2 = os.path.join(path2, os.path.basename(path1))
        os.rename(path1, path2)


def classic(path, **kw):
    fs = ClassicRename()
    for k, v in kw.items():
        setattr(fs, k, v)
    return Location(parse_uri(str(path)), pafs.PyFileSystem(pafs.FSSpecHandler(fs)))


def test_publish_undoes_a_rename_that_landed_inside_a_destination_that_just_appeared(tmp_path):
    src = make_tree(tmp_path / "model", 3)
    dest = tmp_path / "out" / "run1"
    with pytest.raises(StorageError, match="appeared"):
        publish(locate(parse_uri(str(src))), classic(dest, race=str(dest)), "app_1")
    assert [p.name for p in dest.iterdir()] == ["theirs"]  # nothing of ours inside the other job's dir
    assert siblings(dest) == ["run1"]


def test_publish_with_overwrite_replaces_the_whole_tree(tmp_path):
    first, second = make_tree(tmp_path / "a", 3), tmp_path / "b"
    (second / "only").mkdir(parents=True)
    (second / "only" / "new").write_bytes(b"new")
    dest = tmp_path / "out" / "run1"
    publish(locate(parse_uri(str(first))), locate(parse_uri(str(dest))), "app_1")
    publish(locate(parse_uri(str(second))), locate(parse_uri(str(dest))), "app_2", overwrite=True)
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*")) == ["only", "only/new"]
    assert siblings(dest) == ["run1"]  # neither the staging copy nor the old one is left


def test_a_failed_overwrite_puts_the_previous_output_back(tmp_path):
    first, second = make_tree(tmp_path / "a", 3), make_tree(tmp_path / "b", 2)
    dest = tmp_path / "out" / "run1"
    publish(locate(parse_uri(str(first))), locate(parse_uri(str(dest))), "app_1")
    before = {p.name: p.read_bytes() for p in dest.rglob("f*")}
    with pytest.raises(OSError, match="injected rename failure"):
        publish(locate(parse_uri(str(second))), classic(dest, fail=str(dest)), "app_2", overwrite=True)
    assert {p.name: p.read_bytes() for p in dest.rglob("f*")} == before
    assert siblings(dest) == ["run1"]


@pytest.mark.parametrize("how", ["copy_tree", "put_file", "mirror"])
def test_part_files_never_write_through_a_planted_symlink(tmp_path, how):
    src = make_tree(tmp_path / "src", 1)  # src/d0/f0
    dst = tmp_path / "dst"
    (dst / "d0").mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    (dst / "d0" / "f0.tfyarn-part").symlink_to(victim)
    if how == "copy_tree":
        copy_tree(locate(parse_uri(str(src))), locate(parse_uri(str(dst))))
    elif how == "put_file":
        put_file(locate(parse_uri(str(src / "d0" / "f0"))), locate(parse_uri(str(dst / "d0" / "f0"))))
    else:
        mirror(locate(parse_uri(str(src))), locate(parse_uri(str(dst))))
    assert victim.read_bytes() == b"precious"
    assert not (dst / "d0" / "f0").is_symlink()
    assert (dst / "d0" / "f0").read_bytes() == (src / "d0" / "f0").read_bytes()
    assert not (dst / "d0" / "f0.tfyarn-part").exists()


def test_fetch_manifests_are_not_content(tmp_path):
    make_tree(tmp_path / "t", 2)
    (tmp_path / "t" / ".tfyarn-fetch.json").write_text("{}")
    (tmp_path / "t" / "d0" / ".tfyarn-fetch.json").write_text("{}")
    assert [f.rel for f in list_files(locate(parse_uri(str(tmp_path / "t"))))] == ["d0/f0", "d1/f1"]


def test_filesystem_gives_training_scripts_a_client_and_path(tmp_path):
    """tfyarn.storage.filesystem, the one the streaming example reads its shards with."""
    (tmp_path / "part-0.parquet").write_bytes(b"x" * 3)
    fs, path = storage.filesystem(f"file://{tmp_path}")
    assert path == str(tmp_path)
    with fs.open_input_file(f"{path}/part-0.parquet") as f:
        assert f.read() == b"xxx"
    with pytest.raises(SpecError, match="uri: 'ftp://x/y' has scheme 'ftp'"):
        storage.filesystem("ftp://x/y")
