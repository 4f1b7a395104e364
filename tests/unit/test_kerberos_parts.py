"""The pure parts of Kerberos support: the secure config overlay, the KDC's files, ACLs, credentials checks.

The real thing (a KDC, secure daemons, tickets) is tested in tests/kerberos.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tfyarn import credentials, spnego
from tfyarn.cluster import kdc, secure
from tfyarn.cluster.config import ClusterOptions, config_files, to_xml
from tfyarn.cluster.layout import ClusterLayout
from tfyarn.errors import NotAuthenticatedError
from tfyarn.plan import PlanContext, acls
from tfyarn.spec import JobSpec, RoleSpec


def kerberized_layout(tmp_path: Path) -> ClusterLayout:
    lay = ClusterLayout(root=tmp_path / "c", jar_cache=tmp_path / "jars")
    (lay.root / "kerberos" / "db").mkdir(parents=True)
    (lay.root / "kerberos" / "db" / "principal").write_text("")
    (lay.root / "kerberos" / "tls").mkdir()
    (lay.root / "kerberos" / "tls" / "tls.password").write_text("pw\n")
    return lay


def test_a_plain_cluster_writes_no_security_settings(tmp_path: Path):
    lay = ClusterLayout(root=tmp_path / "c", jar_cache=tmp_path / "jars")
    files = config_files(lay, ClusterOptions())
    assert not lay.kerberized and lay.nn_web.startswith("http://")
    assert "kerberos" not in files[lay.conf_dir / "core-site.xml"]
    assert not any(p.name.startswith("ssl-") for p in files)


def test_a_kerberized_cluster_is_secure_everywhere(tmp_path: Path):
    lay = kerberized_layout(tmp_path)
    files = config_files(lay, ClusterOptions(nodes=2))
    core, hdfs, yarn = (files[lay.conf_dir / f] for f in ("core-site.xml", "hdfs-site.xml", "yarn-site.xml"))
    assert lay.kerberized and lay.nn_web == "https://127.0.0.1:9871"
    assert to_xml({"hadoop.security.authentication": "kerberos"}).splitlines()[2] in core
    for key, value in (("dfs.data.transfer.protection", "authentication"), ("dfs.http.policy", "HTTPS_ONLY"),
                       ("dfs.block.access.token.enable", "true")):
        assert f"<name>{key}</name><value>{value}</value>" in hdfs
    assert "<name>yarn.acl.enable</name><value>true</value>" in yarn
    assert "<name>yarn.admin.acl</name><value>yarn</value>" in yarn  # not "*": no user administers all jobs
    assert "<name>yarn.log-aggregation-enable</name><value>true</value>" in yarn  # secureio reads the logs
    assert {p.name for p in files if p.name.startswith("ssl-")} == {"ssl-server.xml", "ssl-client.xml"}
    node2 = config_files(lay.for_node(2), ClusterOptions(nodes=2))[lay.for_node(2).conf_dir / "hdfs-site.xml"]
    assert "127.0.0.2:9965" in node2  # node 2's DataNode HTTPS port, moved up as its other ports


def test_the_realm_config_names_only_loopback_and_no_dns():
    conf = kdc.render_krb5_conf()
    assert f"kdc = 127.0.0.1:{kdc.KDC_PORT}" in conf and "dns_lookup_kdc = false" in conf and "rdns = false" in conf


def test_every_node_address_has_a_spnego_principal():
    names = {p.name for p in kdc.HTTP}
    assert {"HTTP/localhost", "HTTP/127.0.0.1", "HTTP/127.0.0.2"} <= names
    assert {p.keytab for p in kdc.HTTP} == {"http.keytab"}


def test_on_a_kerberized_cluster_the_owner_and_view_acl_users_reach_the_page():
    spec = JobSpec(name="j", command=("python", "x.py"), roles={"worker": RoleSpec("worker")}, view_acls=("bob",))
    assert acls(spec, PlanContext(python="python", kerberized=True, owner="alice")).ui_users == ["alice", "bob"]
    assert acls(spec, PlanContext(python="python")).ui_users == ["*"]


def write_conf(tmp_path: Path, auth: str) -> Path:
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "core-site.xml").write_text(to_xml({"hadoop.security.authentication": auth}))
    return conf


def no_ticket(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{tmp_path / 'no-such-ccache'}")
    monkeypatch.delenv("KRB5_CLIENT_KTNAME", raising=False)
    monkeypatch.delenv("HADOOP_TOKEN_FILE_LOCATION", raising=False)


def test_no_ticket_on_a_kerberized_cluster_says_kinit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    no_ticket(monkeypatch, tmp_path)
    assert spnego.credential_lifetime() == 0
    with pytest.raises(NotAuthenticatedError, match="kinit.*--keytab") as e:
        credentials.require(write_conf(tmp_path, "Kerberos"))
    assert e.value.exit_code == 3


def test_no_ticket_is_fine_on_simple_auth_and_in_a_container(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    no_ticket(monkeypatch, tmp_path)
    credentials.require(write_conf(tmp_path, "simple"))  # control: nothing to check
    monkeypatch.setenv("HADOOP_TOKEN_FILE_LOCATION", str(tmp_path / "tokens"))
    credentials.require(tmp_path / "conf")  # a container's delegation tokens


def test_a_keytab_that_is_not_there_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    no_ticket(monkeypatch, tmp_path)
    with pytest.raises(NotAuthenticatedError, match="--keytab .*missing.keytab: no readable file"):
        credentials.use_keytab("alice", str(tmp_path / "missing.keytab"))
    assert os.environ.get("KRB5_CLIENT_KTNAME") is None  # nothing half-done


def test_spnego_without_a_ticket_says_why(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    no_ticket(monkeypatch, tmp_path)
    with pytest.raises(spnego.SpnegoError, match="credentials|No Kerberos"):
        spnego.token("127.0.0.1")


def test_secure_flags_point_daemon_jvms_at_the_realm(tmp_path: Path):
    from tfyarn.cluster.daemons import secure_flags

    lay = kerberized_layout(tmp_path)
    assert secure_flags(lay) == [f"-Djava.security.krb5.conf={lay.root / 'kerberos' / 'krb5.conf'}"]
    assert secure.ca_pem(lay).name == "cluster.pem"


def test_only_a_kerberized_clusters_nodemanagers_load_tfyarns_secureio_first(tmp_path: Path):
    from tfyarn.cluster import daemons, secureio
    from tfyarn.cluster.layout import ClusterLayout

    lay, plain = kerberized_layout(tmp_path), ClusterLayout(root=tmp_path / "plain")
    first = str(secureio.classes_dir(lay))
    for node in (lay, lay.for_node(2)):
        for nm in (daemons.NODEMANAGER, daemons.EXTRA_NODEMANAGER):
            cmd = daemons.java_command(node, nm)
            assert cmd[cmd.index("-cp") + 1].split(":")[0] == first
    for d in (daemons.NAMENODE, daemons.DATANODE, daemons.RESOURCEMANAGER):
        cmd = daemons.java_command(lay, d)
        assert first not in cmd[cmd.index("-cp") + 1]
    cmd = daemons.java_command(plain, daemons.NODEMANAGER)
    assert "secureio" not in cmd[cmd.index("-cp") + 1]


def test_secureio_compiles_against_the_cached_hadoop_jars_and_keeps_hadoops_api(tmp_path: Path):
    """The class must keep every public method of Hadoop's SecureIOUtils (the NodeManager calls them)."""
    import subprocess

    from tfyarn.cluster import secureio
    from tfyarn.cluster.java import java_home
    from tfyarn.cluster.layout import ClusterLayout

    lay = ClusterLayout(root=tmp_path / "c")
    common = sorted(lay.lib_dir.glob("hadoop-common-*.jar"))
    if not common:
        pytest.fail(f"no hadoop-common jar in {lay.lib_dir}: run `tfyarn cluster up` once (CI does, before the tests)")
    ours = secureio.ensure(lay)
    javap = str(java_home() / "bin" / "javap")

    def public_api(cp: str) -> set[str]:
        out = subprocess.run([javap, "-J-Xmx128m", "-cp", cp, "org.apache.hadoop.io.SecureIOUtils"],
                             capture_output=True, text=True, check=True).stdout
        return {line.strip() for line in out.splitlines() if line.strip().startswith("public static")}

    assert public_api(str(common[0])) == public_api(str(ours)) != set()
    assert (secureio.classes_dir(lay) / secureio.CLASS).exists() and secureio.ensure(lay) == ours  # once


def test_other_namenodes_of_inputs_and_outputs_get_delegation_tokens():
    from tfyarn.plan import other_filesystems
    from tfyarn.spec import InputSpec, OutputSpec

    spec = JobSpec(name="j", command=("python", "x.py"), roles={"worker": RoleSpec("worker")},
                   inputs=(InputSpec("hdfs:///default/data"), InputSpec("hdfs://nn2:8020/data"),
                           InputSpec("viewfs://cluster/a")),
                   outputs=(OutputSpec("./m", "hdfs://nn2:8020/models"), OutputSpec("./n", "/local/dir")))
    assert other_filesystems(spec) == ["hdfs://nn2:8020", "viewfs://cluster"]
