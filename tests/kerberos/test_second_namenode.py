"""Inputs and outputs on a second NameNode: the job gets its delegation token at submit, with nothing to add.

A second HDFS (its own NameNode and DataNode, formatted apart, on other
loopback ports) joins the suite's realm: same KDC, keytabs and TLS keys,
config written by the cluster's own writer for another set of ports. alice
stages an input from it and publishes an output to it; the containers have
no keytab and no ticket, so only the token skein fetched at submit (tfyarn
hands it the filesystems the job names) lets them in. The job also writes
the services of the tokens it was given into its output: the proof. The same
through a viewfs mount table whose links lead to both NameNodes: skein asks
the ViewFileSystem for its tokens, which are those of every NameNode mounted.
"""
from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from tests.kerberos.conftest import User, hdfs
from tfyarn.cluster import LocalCluster, daemons, kdc
from tfyarn.cluster.config import ClusterOptions, config_files
from tfyarn.cluster.layout import ClusterLayout, Ports

# Clear of the suite's ports, its extra node's DataNode (+100) and the KDC.
PORTS = replace(Ports(), namenode_rpc=9400, namenode_http=9470, namenode_https=9471, datanode_data=9476,
                datanode_http=9474, datanode_ipc=9477, datanode_https=9475)
NN2 = f"hdfs://127.0.0.1:{PORTS.namenode_rpc}"

# Run in the container: copy the staged input to the output, and list the tokens YARN handed it.
JOB = """
import os, shutil
from tfyarn import tokens
shutil.copytree(os.environ["TFYARN_INPUT"], "out")
creds = tokens.parse(open(os.environ["HADOOP_TOKEN_FILE_LOCATION"], "rb").read())
open("out/services.txt", "w").write("\\n".join(t.service for _, t in creds.hdfs_tokens()))
"""


def admin(cluster: LocalCluster, *args: str) -> subprocess.CompletedProcess[str]:
    """``hdfs ARGS`` as HDFS's superuser (the suite's process holds its ticket)."""
    return subprocess.run([str(cluster.layout.bin_dir / "hdfs"), *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def second_hdfs(kcluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterLayout]:
    root = tmp_path_factory.mktemp("nn2")
    (root / "kerberos").symlink_to(kdc.kerberos_dir(kcluster.layout))  # the realm, keytabs and TLS keys
    layout = ClusterLayout(root=root, jar_cache=kcluster.layout.jar_cache, ports=PORTS)
    assert layout.kerberized
    for path, text in config_files(layout, ClusterOptions(gpus=0, token_lifetime_s=0)).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    try:
        daemons.format_namenode(layout)
        daemons.start(layout, daemons.NAMENODE)
        daemons.start(layout, daemons.EXTRA_DATANODE)
        deadline = time.monotonic() + 180
        while True:
            report = admin(kcluster, "dfsadmin", "-fs", NN2, "-report", "-live")
            if report.returncode == 0 and "Live datanodes (1)" in report.stdout:
                break
            assert time.monotonic() < deadline, report.stdout + report.stderr + daemons.log_tail(layout, daemons.NAMENODE)
            time.sleep(2)
        for args in (["-mkdir", "-p", f"{NN2}/tmp"], ["-chmod", "1777", f"{NN2}/tmp"]):
            res = admin(kcluster, "dfs", *args)
            assert res.returncode == 0, res.stderr
        yield layout
    finally:
        daemons.stop_all(layout)


def test_input_and_output_on_a_second_namenode_get_their_token_at_submit(kcluster: LocalCluster, alice: User,
                                                                         second_hdfs: ClusterLayout, tmp_path: Path):
    run = uuid.uuid4().hex[:8]
    data = tmp_path / "data"
    data.mkdir()
    (data / "x.txt").write_text(f"on the second NameNode {run}\n")
    hdfs(kcluster, alice, "-put", str(data), f"{NN2}/tmp/{run}-data")
    flags = ["--input", f"{NN2}/tmp/{run}-data", "--output", f"./out:{NN2}/tmp/{run}-out"]
    dry = alice.tfyarn("submit", "--dry-run=yarn", "--num-workers", "1", *flags, "--", "python", "-c", JOB)
    assert dry.returncode == 0 and f"- {NN2}" in dry.stdout, dry.stdout + dry.stderr  # skein's file_systems
    res = alice.tfyarn("submit", "--wait", "--num-workers", "1", *flags, "--", "python", "-c", JOB, timeout=400)
    assert res.returncode == 0 and "SUCCEEDED" in res.stdout, res.stdout + res.stderr
    fetched = tmp_path / "fetched"
    got = alice.tfyarn("fetch", f"{NN2}/tmp/{run}-out", str(fetched))
    assert got.returncode == 0, got.stderr
    assert (fetched / "x.txt").read_text() == f"on the second NameNode {run}\n"
    services = (fetched / "services.txt").read_text().split()
    assert f"127.0.0.1:{PORTS.namenode_rpc}" in services and len(services) >= 2, services
    # The default NameNode never saw the job's data.
    ls = subprocess.run([str(kcluster.layout.bin_dir / "hdfs"), "dfs", "-ls", f"/tmp/{run}-out"], env=alice.env,
                        capture_output=True, text=True, timeout=60)
    assert ls.returncode != 0 and "No such file" in ls.stderr, ls.stdout + ls.stderr


@pytest.fixture
def viewfs(kcluster: LocalCluster, second_hdfs: ClusterLayout) -> Iterator[str]:
    """A viewfs mount table ``viewfs://ctab``: /second is the second NameNode's /tmp, /first the cluster's;
    in the core-site of every node (the client and skein's driver read node 1's, a container its node's)."""
    sites = [node.conf_dir / "core-site.xml" for node in (kcluster.layout, kcluster.layout.for_node(2))]
    before = [site.read_text() for site in sites]
    # hdfs-native (tfyarn's HDFS client without libhdfs) needs a fallback link for the paths no link names.
    links = {"link./second": f"{NN2}/tmp", "link./first": f"{kcluster.layout.fs_uri}/tmp",
             "linkFallback": f"{kcluster.layout.fs_uri}/"}
    props = "".join(f"<property><name>fs.viewfs.mounttable.ctab.{escape(k)}</name><value>{escape(v)}</value>"
                    "</property>\n" for k, v in links.items())
    for site, text in zip(sites, before, strict=True):
        site.write_text(text.replace("</configuration>", props + "</configuration>"))
    try:
        yield "viewfs://ctab"
    finally:
        for site, text in zip(sites, before, strict=True):
            site.write_text(text)


def test_input_and_output_through_a_viewfs_mount_table_get_the_mounted_namenodes_tokens(
        kcluster: LocalCluster, alice: User, second_hdfs: ClusterLayout, viewfs: str, tmp_path: Path):
    run = uuid.uuid4().hex[:8]
    data = tmp_path / "data"
    data.mkdir()
    (data / "x.txt").write_text(f"through viewfs {run}\n")
    hdfs(kcluster, alice, "-put", str(data), f"{NN2}/tmp/{run}-data")
    flags = ["--input", f"{viewfs}/second/{run}-data", "--output", f"./out:{viewfs}/second/{run}-out"]
    dry = alice.tfyarn("submit", "--dry-run=yarn", "--num-workers", "1", *flags, "--", "python", "-c", JOB)
    assert dry.returncode == 0 and f"- {viewfs}" in dry.stdout, dry.stdout + dry.stderr  # skein's file_systems
    res = alice.tfyarn("submit", "--wait", "--num-workers", "1", *flags, "--", "python", "-c", JOB, timeout=400)
    assert res.returncode == 0 and "SUCCEEDED" in res.stdout, res.stdout + res.stderr
    fetched = tmp_path / "fetched"
    got = alice.tfyarn("fetch", f"{viewfs}/second/{run}-out", str(fetched))
    assert got.returncode == 0, got.stderr
    assert (fetched / "x.txt").read_text() == f"through viewfs {run}\n"
    services = (fetched / "services.txt").read_text().split()
    assert f"127.0.0.1:{PORTS.namenode_rpc}" in services, services  # the mounted second NameNode's token
    # It is on the second NameNode, as the mount table says, and not on the first.
    assert hdfs(kcluster, alice, "-cat", f"{NN2}/tmp/{run}-out/x.txt") == f"through viewfs {run}\n"

