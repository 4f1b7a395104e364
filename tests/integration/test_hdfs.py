"""HDFS on the real NameNode and DataNode, through the cluster's own commands."""
import os


def test_put_get_round_trip(cluster, tmp_path):
    from tests.integration.conftest import hadoop

    data = os.urandom(3 * 1024 * 1024 + 17)  # more than one packet, not a round size
    src = tmp_path / "blob.bin"
    src.write_bytes(data)
    target = f"/user/{os.environ.get('USER', 'root')}/it-{os.getpid()}/blob.bin"
    assert hadoop(cluster, "hdfs", "dfs", "-mkdir", "-p", os.path.dirname(target)).returncode == 0
    put = hadoop(cluster, "hdfs", "dfs", "-put", "-f", str(src), target)
    assert put.returncode == 0, put.stderr
    ls = hadoop(cluster, "hadoop", "fs", "-ls", target)
    assert str(len(data)) in ls.stdout
    back = tmp_path / "back.bin"
    get = hadoop(cluster, "hdfs", "dfs", "-get", target, str(back))
    assert get.returncode == 0, get.stderr
    assert back.read_bytes() == data
    assert hadoop(cluster, "hdfs", "dfs", "-rm", "-r", "-skipTrash", os.path.dirname(target)).returncode == 0
    assert hadoop(cluster, "hdfs", "dfs", "-test", "-e", target).returncode != 0
