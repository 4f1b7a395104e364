"""One DataNode per node: each node's own address and ports, and files kept on both nodes."""
from __future__ import annotations

import json
import os
import signal
import urllib.request
import uuid

import pytest

from tests.integration.conftest import hadoop, tfyarn, wait_for
from tests.integration.nodes import NODE2, ensure_nodes, two_nodes  # noqa: F401
from tfyarn.storage.fs import locate
from tfyarn.storage.transfer import copy_tree
from tfyarn.storage.uri import parse_uri


def live_datanodes() -> dict[str, dict]:
    """The NameNode's own list of live DataNodes: name (host:port) -> its record."""
    url = "http://127.0.0.1:9870/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo"
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(json.load(r)["beans"][0]["LiveNodes"])


def block_locations(cluster, path: str) -> list[str]:
    """The DataNodes (xfer addresses) holding ``path``'s blocks, as fsck reports them."""
    res = hadoop(cluster, "hdfs", "fsck", path, "-files", "-blocks", "-locations")
    assert res.returncode == 0, res.stdout + res.stderr
    return sorted(part.split(",")[0] for part in res.stdout.split("DatanodeInfoWithStorage[")[1:])


def test_each_node_runs_its_own_datanode_at_its_own_address(two_nodes):
    st = json.loads(tfyarn("cluster", "status", "--json").stdout)
    assert st["live_datanodes"] == 2
    for n in st["nodes"]:
        assert n["datanode_pid"] and n["datanode_pid"] != n["nodemanager_pid"]
    # The NameNode knows each by its node's name; node 2's ports are its own (100 above node 1's).
    assert set(live_datanodes()) == {"127.0.0.1:9866", f"{NODE2}:9966"}
    with urllib.request.urlopen(f"http://{NODE2}:9964/jmx?qry=Hadoop:service=DataNode,name=DataNodeInfo",
                                timeout=5) as r:
        assert json.load(r)["beans"][0]["DatanodeHostname"] == NODE2
    assert "datanode pid" in tfyarn("cluster", "status").stdout


def test_a_file_written_by_tfyarn_has_a_copy_on_each_node(two_nodes):
    path = f"/tmp/it-dn-{uuid.uuid4().hex}"
    loc = locate(parse_uri(f"hdfs://127.0.0.1:9000{path}"))  # hdfs-native: tfyarn's own client
    data = os.urandom(2 * 1024 * 1024 + 3)
    with loc.fs.open_output_stream(path) as f:
        f.write(data)
    try:
        # Both DataNodes, each listed by its xfer port (the NameNode records the RPC's source, 127.0.0.1).
        assert block_locations(two_nodes, path) == ["127.0.0.1:9866", "127.0.0.1:9966"]
        assert loc.fs.open_input_stream(path).read() == data
    finally:
        loc.fs.delete_file(path)


@pytest.mark.disruptive
def test_a_file_stays_readable_when_a_nodes_datanode_dies_and_tfyarns_copies_go_on(two_nodes, tmp_path):
    """Reading falls over to node 1's copy at once. A write can still be given the dead node for a few
    seconds after the NameNode declares it dead (15 s here), and hdfs-native then fails that file
    (Java's client would retry without the node): tfyarn's copies retry each file, and get through."""
    base = f"/tmp/it-dn-loss-{uuid.uuid4().hex}"
    loc = locate(parse_uri(f"hdfs://127.0.0.1:9000{base}"))
    data = os.urandom(1024 * 1024)
    loc.fs.create_dir(base)
    with loc.fs.open_output_stream(f"{base}/before") as f:
        f.write(data)
    pid = int((two_nodes.layout.for_node(2).pid_dir / "datanode.pid").read_text())
    try:
        os.kill(pid, signal.SIGKILL)
        assert loc.fs.open_input_stream(f"{base}/before").read() == data  # from node 1's copy
        wait_for("the NameNode to drop node 2's DataNode", lambda: f"{NODE2}:9966" not in live_datanodes(), 60)
        (tmp_path / "after").write_bytes(data)
        report = copy_tree(locate(parse_uri(str(tmp_path))), loc)
        assert report.files == 1, report
        assert block_locations(two_nodes, f"{base}/after") == ["127.0.0.1:9866"]
        assert loc.fs.open_input_stream(f"{base}/after").read() == data
    finally:
        ensure_nodes(2)  # `up` starts node 2's DataNode again
        wait_for("node 2's DataNode back", lambda: f"{NODE2}:9966" in live_datanodes(), 60)
        loc.fs.delete_dir(base)
