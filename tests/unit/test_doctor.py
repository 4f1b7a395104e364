"""`tfyarn doctor`: each check passing and failing against a fake world (no network, no processes).

The world is a Probe of fakes: which host:ports accept a connection, what the
RM's REST API answers (in its real JSON shapes), what `yarn classpath` and
`klist -s` exit with, whether HDFS takes a dir. The config files are real
files in a tmp dir, read by tfyarn.hadoopconf as the doctor reads them.
"""
from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from tfyarn import doctor, hadoop_env, hadoopconf, protocol
from tfyarn.cli import doctor_cmd
from tfyarn.cli.main import cli
from tfyarn.cluster.config import to_xml
from tfyarn.doctor import Outcome, Probe, run_checks
from tfyarn.envchoice import EnvChoice
from tfyarn.rest import FetchError
from tfyarn.rmnodes import NodeCapacity

RM_WEB = "http://rm.example:8088"
CONF_GPU = json.dumps({"properties": [
    {"key": "yarn.scheduler.maximum-allocation-mb", "value": "8192", "isFinal": False, "resource": "yarn-site.xml"},
    {"key": "yarn.resource-types", "value": "yarn.io/gpu", "isFinal": False, "resource": "resource-types.xml"},
]}).encode()
CONF_CPU = json.dumps({"properties": [
    {"key": "yarn.scheduler.maximum-allocation-mb", "value": "8192", "isFinal": False, "resource": "yarn-site.xml"},
]}).encode()


def leaf(path: str, state: str = "RUNNING") -> dict:
    return {"type": "capacitySchedulerLeafQueueInfo", "queuePath": path, "queueName": path.rsplit(".", 1)[-1],
            "state": state, "autoCreationEligibility": "off", "autoCreateChildQueueEnabled": False}


def capacity(*queues: dict) -> bytes:
    return json.dumps({"scheduler": {"schedulerInfo": {
        "type": "capacityScheduler", "queueName": "root", "queuePath": "root", "queues": {"queue": list(queues)}}}}
    ).encode()


QUEUES = capacity(leaf("root.default"), leaf("root.research"), leaf("root.old", "STOPPED"))
NODES = [NodeCapacity("gpu1.example:8041", 16384, 16, 2), NodeCapacity("cpu1.example:8041", 16384, 16, 0)]
REFUSED = ConnectionRefusedError(111, "Connection refused")


@dataclass
class World:
    """What the fakes answer; ``calls`` records what the checks asked, in order."""

    open: set[tuple[str, int]] = field(default_factory=lambda: {("rm.example", 8032), ("nn.example", 8020)})
    rest: dict[str, bytes | Exception] = field(default_factory=lambda: {
        f"{RM_WEB}/conf": CONF_GPU, f"{RM_WEB}/ws/v1/cluster/scheduler": QUEUES})
    info: dict[str, bytes | Exception] = field(default_factory=dict)
    nodes: list[NodeCapacity] | Exception = field(default_factory=lambda: list(NODES))
    commands: dict[str, tuple[int, str] | Exception] = field(default_factory=lambda: {
        "yarn": (0, "/opt/hadoop/share/hadoop/common/hadoop-common.jar"), "klist": (1, "")})
    hdfs_error: Exception | None = None
    can_pack: bool = False  # whether this environment could be shipped (envchoice.pack_problem is None)
    calls: list[tuple] = field(default_factory=list)

    def python_env(self, conf_dir):
        """envchoice.choose, as it answers for a client in /opt/venv: the local cluster sees it, others do not."""
        if conf_dir is not None and conf_dir.name == "conf" and conf_dir.parent.name == "local-cluster":
            return EnvChoice("local", "every node of the local cluster sees /opt/venv/bin/python")
        if self.can_pack:
            return EnvChoice("packed", "the cluster is not this machine's local one; this environment /opt/venv is shipped")
        return EnvChoice("local", "the cluster is not this machine's local one, and this environment cannot be "
                         "shipped: needs a virtualenv", warning="python_env auto: containers will run /usr/bin/python3, ...")

    def run(self, argv, env, timeout):
        self.calls.append(("run", tuple(argv), env.get("PATH"), env.get(protocol.ENV_HADOOP_CONF_DIR), timeout))
        answer = self.commands.get(Path(argv[0]).name, FileNotFoundError(2, "No such file", argv[0]))
        if isinstance(answer, Exception):
            raise answer
        return answer

    def connect(self, host, port):
        self.calls.append(("connect", host, port))
        if (host, port) not in self.open:
            raise REFUSED

    def get(self, url):
        self.calls.append(("get", url))
        answer = self.rest.get(url, FetchError("HTTP 404 Not Found"))
        if isinstance(answer, Exception):
            raise answer
        return answer

    def cluster_info(self, url):
        answer = self.info.get(url, OSError("Connection refused"))
        if isinstance(answer, Exception):
            raise answer
        return answer

    def running_nodes(self, url):
        self.calls.append(("nodes", url))
        if isinstance(self.nodes, Exception):
            raise self.nodes
        return self.nodes

    def hdfs(self, conf_dir, uri):
        self.calls.append(("hdfs", conf_dir, uri))
        if self.hdfs_error is not None:
            raise self.hdfs_error


def write_conf(path: Path, core: dict | None = None, yarn: dict | None = None, hdfs: dict | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "core-site.xml").write_text(to_xml({"fs.defaultFS": "hdfs://nn.example:8020", **(core or {})}))
    (path / "yarn-site.xml").write_text(to_xml({"yarn.resourcemanager.address": "rm.example:8032",
                                                "yarn.resourcemanager.webapp.address": "rm.example:8088",
                                                **(yarn or {})}))
    (path / "hdfs-site.xml").write_text(to_xml({"dfs.replication": "3", **(hdfs or {})}))
    return path


def executable(path: Path, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def site(tmp_path):
    """A client setup: a conf dir named by HADOOP_CONF_DIR, a `yarn` on PATH, user alice."""
    conf = write_conf(tmp_path / "conf")
    yarn = executable(tmp_path / "hadoop" / "bin" / "yarn")
    env = {"PATH": f"{yarn.parent}:/usr/bin:/bin", protocol.ENV_HADOOP_CONF_DIR: str(conf),
           protocol.ENV_HADOOP_USER_NAME: "alice"}
    return {"conf": conf, "yarn": yarn, "env": env, "local": tmp_path / "local-cluster"}


def probe_of(world: World, site: dict, **env: str | None) -> Probe:
    environ = {**site["env"], **env}
    return Probe(
        environ={k: v for k, v in environ.items() if v is not None},
        local_conf_dir=site["local"] / "conf",
        local_bin_dir=site["local"] / "bin",
        python_env=world.python_env,
        run=world.run,
        connect=world.connect,
        get=world.get,
        info=world.cluster_info,
        nodes=world.running_nodes,
        hdfs_probe=world.hdfs,
    )


def check(world: World, site: dict, queue: str = "", **env: str | None) -> dict[str, doctor.CheckResult]:
    return {r.name: r for r in run_checks(probe_of(world, site, **env), queue)}


def outcomes(results: dict[str, doctor.CheckResult]) -> dict[str, str]:
    return {name: r.outcome.value for name, r in results.items()}


# --- the whole run -------------------------------------------------------------------


def test_a_working_cluster_passes_every_check_in_order(site):
    world = World()
    results = run_checks(probe_of(world, site))
    assert [r.name for r in results] == list(doctor.NAMES) == [
        "config", "yarn", "resourcemanager", "namenode", "hdfs-home", "kerberos", "gpus", "queues", "python-env",
        "docker"]
    got = {r.name: r for r in results}
    assert outcomes(got) == {"config": "OK", "yarn": "OK", "resourcemanager": "OK", "namenode": "OK",
                             "hdfs-home": "OK", "kerberos": "OK", "gpus": "OK", "queues": "OK",
                             "python-env": "WARN", "docker": "SKIP"}
    assert doctor.exit_code(results) == 0
    conf = site["conf"]
    assert got["config"].detail == (f"HADOOP_CONF_DIR={conf}: core-site.xml, yarn-site.xml, hdfs-site.xml read")
    assert got["yarn"].detail == f"{site['yarn']}: `classpath --glob` works"
    assert got["resourcemanager"].detail == f"rm.example:8032 is reachable (web and REST: {RM_WEB})"
    assert got["namenode"].detail == "nn.example:8020 is reachable (fs.defaultFS hdfs://nn.example:8020)"
    assert got["gpus"].detail == "yarn.io/gpu declared; GPUs per RUNNING node: gpu1.example 2, cpu1.example 0"
    assert got["queues"].detail == "leaf queues that take jobs: default, research; queue 'default' takes jobs"
    assert got["kerberos"].detail.startswith("simple auth")
    # What was asked of the world, in the checks' order: yarn with the conf dir, HDFS as alice.
    kinds = [c[0] for c in world.calls]
    assert kinds == ["run", "connect", "connect", "hdfs", "nodes", "get", "get"]
    run = world.calls[0]
    assert run[1] == (str(site["yarn"]), "classpath", "--glob") and run[3] == str(conf) and run[4] == 60.0
    _, conf_dir, uri = world.calls[3]
    assert conf_dir == conf and uri.startswith("hdfs:///user/alice/.tfyarn/doctor-") and len(uri) > 35


def test_every_fail_names_a_fix_and_its_line_says_it(site, tmp_path):
    broken = [
        check(World(), site, HADOOP_CONF_DIR=str(tmp_path / "missing")),
        check(World(commands={"yarn": (1, "Error: JAVA_HOME is not set")}), site),
        check(World(open={("nn.example", 8020)}), site),
        check(World(open={("rm.example", 8032)}), site),
        check(World(hdfs_error=PermissionError(13, "Permission denied")), site),
        check(World(nodes=[]), site),
        check(World(), site, queue="nope"),
    ]
    fails = [r for results in broken for r in results.values() if r.outcome == Outcome.FAIL]
    assert len(fails) == len(broken)  # each world breaks exactly one check
    for r in fails:
        assert r.fix, r
        assert doctor.render_line(r) == f"FAIL  {r.name:<15}  {r.detail}; fix: {r.fix}"


def test_render_one_line_per_check_fix_only_on_fail_and_warn(site):
    results = run_checks(probe_of(World(open={("nn.example", 8020)}), site))
    lines = doctor.render(results)
    assert len(lines) == len(results) == 10
    for line, r in zip(lines, results, strict=True):
        assert line.split()[:2] == [r.outcome.value, r.name]
        assert ("; fix: " in line) == (r.outcome in (Outcome.FAIL, Outcome.WARN)), line
    assert lines[6] == f"SKIP  {'gpus':<15}  needs resourcemanager"


def test_json_is_a_list_of_typed_results(site):
    results = run_checks(probe_of(World(open=set()), site))
    doc = json.loads(doctor.to_json(results))
    assert [d["name"] for d in doc] == list(doctor.NAMES)
    for d in doc:
        assert set(d) == {"name", "outcome", "detail", "fix"}
        assert d["outcome"] in {"OK", "WARN", "FAIL", "SKIP"} and d["detail"]
    assert doc[2] == results[2].to_dict() and doc[2]["outcome"] == "FAIL"


@pytest.mark.parametrize("outcomes_,code", [
    ([Outcome.OK, Outcome.WARN, Outcome.SKIP], 0),
    ([Outcome.OK, Outcome.FAIL, Outcome.SKIP], 1),
    ([], 0),
])
def test_exit_code_is_1_exactly_when_something_fails(outcomes_, code):
    assert doctor.exit_code([doctor.CheckResult(f"c{i}", o, "d") for i, o in enumerate(outcomes_)]) == code


def test_a_crashing_check_fails_instead_of_passing(site, monkeypatch):
    def boom(probe, found):
        raise KeyError("surprise")

    checks = tuple((name, boom if name == "docker" else fn, needs) for name, fn, needs in doctor.CHECKS)
    monkeypatch.setattr(doctor, "CHECKS", checks)
    got = check(World(), site)
    assert got["docker"].outcome == Outcome.FAIL and "KeyError" in got["docker"].detail and got["docker"].fix


# --- 1. config --------------------------------------------------------------------------


def test_config_dir_that_does_not_exist_fails_and_skips_what_needs_it(site, tmp_path):
    missing = tmp_path / "nowhere"
    got = check(World(), site, HADOOP_CONF_DIR=str(missing))
    assert got["config"].outcome == Outcome.FAIL
    assert got["config"].detail == f"HADOOP_CONF_DIR={missing}: no such directory"
    assert got["config"].fix.startswith("export HADOOP_CONF_DIR=")
    for name in ("resourcemanager", "namenode", "kerberos", "python-env", "docker"):
        assert (got[name].outcome, got[name].detail) == (Outcome.SKIP, "needs config"), name
    assert (got["hdfs-home"].detail, got["gpus"].detail, got["queues"].detail) == (
        "needs namenode", "needs resourcemanager", "needs resourcemanager")
    assert got["yarn"].outcome == Outcome.OK  # needs no config


def test_config_named_by_yarn_conf_dir_names_that_variable_in_the_fix(site, tmp_path):
    got = check(World(), site, HADOOP_CONF_DIR=None, YARN_CONF_DIR=str(tmp_path / "gone"))["config"]
    assert got.outcome == Outcome.FAIL and got.detail.startswith("YARN_CONF_DIR=")
    assert got.fix.startswith("export YARN_CONF_DIR=")


def test_no_config_anywhere_fails_naming_hadoop_conf_dir(site):
    got = check(World(), site, HADOOP_CONF_DIR=None)["config"]
    assert got.outcome == Outcome.FAIL
    assert "HADOOP_CONF_DIR, YARN_CONF_DIR and HADOOP_HOME are unset" in got.detail
    assert "export HADOOP_CONF_DIR=" in got.fix and "tfyarn cluster up" in got.fix


def test_config_from_hadoop_home_and_from_the_local_cluster_say_so(site, tmp_path):
    home = tmp_path / "hadoop"
    write_conf(home / "etc" / "hadoop")
    got = check(World(), site, HADOOP_CONF_DIR=None, HADOOP_HOME=str(home))
    assert got["config"].outcome == Outcome.OK
    assert got["config"].detail.startswith(f"{home / 'etc' / 'hadoop'} (HADOOP_HOME/etc/hadoop): ")
    write_conf(site["local"] / "conf")
    got = check(World(), site, HADOOP_CONF_DIR=None)
    assert got["config"].detail.startswith(f"{site['local'] / 'conf'} (the local cluster): ")
    assert got["python-env"].outcome == Outcome.OK  # the local cluster's nodes are this machine
    assert got["python-env"].detail == ("python_env auto: local (every node of the local cluster sees "
                                        "/opt/venv/bin/python)")


def test_config_file_that_is_not_xml_fails_naming_the_file(site):
    (site["conf"] / "yarn-site.xml").write_text("<configuration><property>")
    got = check(World(), site)
    assert got["config"].outcome == Outcome.FAIL
    assert str(site["conf"] / "yarn-site.xml") in got["config"].detail and "not valid XML" in got["config"].detail
    assert "HADOOP_CONF_DIR" in got["config"].fix
    assert got["resourcemanager"].detail == "needs config"


def test_config_without_yarn_site_warns(site):
    (site["conf"] / "yarn-site.xml").unlink()
    got = check(World(), site)["config"]
    assert got.outcome == Outcome.WARN and "no yarn-site.xml" in got.detail and "HADOOP_CONF_DIR" in got.fix


# --- 2. yarn ----------------------------------------------------------------------------


def test_no_yarn_anywhere_fails(site):
    world = World()
    got = check(world, site, PATH="/usr/bin:/bin")
    assert got["yarn"].outcome == Outcome.FAIL and got["yarn"].detail.startswith("no `yarn` on PATH")
    assert "PATH" in got["yarn"].fix and "HADOOP_HOME" in got["yarn"].fix
    assert not [c for c in world.calls if c[0] == "run"]  # nothing to run
    assert got["resourcemanager"].outcome == Outcome.OK  # does not need yarn


def test_yarn_from_hadoop_home_is_added_to_path_as_discover_does(site, tmp_path):
    home = tmp_path / "hadoop"  # has bin/yarn (the fixture's)
    world = World()
    got = check(world, site, PATH="/usr/bin:/bin", HADOOP_HOME=str(home))["yarn"]
    assert got.outcome == Outcome.OK and f"(not on PATH: tfyarn adds {home / 'bin'})" in got.detail
    assert world.calls[0][2] == f"{home / 'bin'}:/usr/bin:/bin"


def test_yarn_path_is_hadoop_env_discovers(site, tmp_path, monkeypatch):
    """The doctor's PATH rule is hadoop_env.discover's: the PATH skein gets."""
    cluster = tmp_path / "cluster"
    executable(cluster / "bin" / "yarn")
    for env in ({"PATH": "/usr/bin:/bin"}, {"PATH": "/usr/bin", "HADOOP_HOME": str(tmp_path / "hadoop")},
                {"PATH": f"{site['yarn'].parent}:/bin"}):
        monkeypatch.setenv(protocol.ENV_CLUSTER_DIR, str(cluster))
        monkeypatch.setenv(protocol.ENV_HADOOP_CONF_DIR, str(site["conf"]))
        monkeypatch.delenv(protocol.ENV_HADOOP_HOME, raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        hit = doctor.yarn_path(os.environ, cluster / "bin")
        assert hit is not None and hit[0] == hadoop_env.discover().path


@pytest.mark.parametrize("answer,detail", [
    ((1, "line one\nError: JAVA_HOME is not set and could not be found.\n"),
     "classpath --glob` exited 1: Error: JAVA_HOME is not set and could not be found."),
    (subprocess.TimeoutExpired("yarn", 60), "classpath --glob` did not finish in 60 s"),
    (PermissionError(13, "Permission denied"), "Permission denied"),
])
def test_yarn_classpath_that_fails_fails(site, answer, detail):
    got = check(World(commands={"yarn": answer}), site)["yarn"]
    assert got.outcome == Outcome.FAIL and detail in got.detail and "JAVA_HOME" in got.fix


# --- 3. resourcemanager ----------------------------------------------------------------------


def test_unreachable_rm_fails_naming_the_property_and_its_file(site):
    got = check(World(open={("nn.example", 8020)}), site)
    rm = got["resourcemanager"]
    assert rm.outcome == Outcome.FAIL
    assert rm.detail == "the ResourceManager at rm.example:8032 is unreachable (Connection refused)"
    assert rm.fix == (f"start the ResourceManager, or set yarn.resourcemanager.address in "
                      f"{site['conf'] / 'yarn-site.xml'} to its host:port")
    assert (got["gpus"].detail, got["queues"].detail) == ("needs resourcemanager", "needs resourcemanager")
    assert got["namenode"].outcome == Outcome.OK


def test_rm_address_that_is_not_host_port_fails(site):
    write_conf(site["conf"], yarn={"yarn.resourcemanager.address": "rm.example:80x"})
    got = check(World(), site)["resourcemanager"]
    assert got.outcome == Outcome.FAIL and "yarn.resourcemanager.address" in got.detail and got.fix


HA = {"yarn.resourcemanager.ha.enabled": "true", "yarn.resourcemanager.ha.rm-ids": "rm1,rm2",
      "yarn.resourcemanager.address.rm1": "m1.example:8032", "yarn.resourcemanager.address.rm2": "m2.example:8032",
      "yarn.resourcemanager.webapp.address.rm1": "m1.example:8088",
      "yarn.resourcemanager.webapp.address.rm2": "m2.example:8088"}


def ha_info(state: str) -> bytes:
    return json.dumps({"clusterInfo": {"id": 1, "haState": state, "state": "STARTED"}}).encode()


def test_ha_lists_each_rm_and_its_state_and_reads_rest_of_the_active(site):
    write_conf(site["conf"], yarn=HA)
    world = World(open={("m1.example", 8032), ("m2.example", 8032), ("nn.example", 8020)},
                  info={"http://m1.example:8088/ws/v1/cluster/info": ha_info("STANDBY"),
                        "http://m2.example:8088/ws/v1/cluster/info": ha_info("ACTIVE")},
                  rest={"http://m2.example:8088/conf": CONF_GPU,
                        "http://m2.example:8088/ws/v1/cluster/scheduler": QUEUES})
    got = check(world, site)
    rm = got["resourcemanager"]
    assert (rm.outcome, rm.detail) == (Outcome.OK, "rm1 at m1.example:8032: STANDBY; rm2 at m2.example:8032: ACTIVE: "
                                                   "rm2 is active")
    assert got["gpus"].outcome == got["queues"].outcome == Outcome.OK
    assert ("nodes", "http://m2.example:8088") in world.calls


def test_ha_with_one_rm_down_warns_and_none_active_fails(site):
    write_conf(site["conf"], yarn=HA)
    infos = {"http://m1.example:8088/ws/v1/cluster/info": ha_info("ACTIVE")}
    got = check(World(open={("m1.example", 8032)}, info=infos), site)["resourcemanager"]
    assert got.outcome == Outcome.WARN
    assert got.detail.startswith("rm1 at m1.example:8032: ACTIVE; rm2 at m2.example:8032: unreachable")
    assert "failover" in got.fix
    standby = {"http://m1.example:8088/ws/v1/cluster/info": ha_info("STANDBY"),
               "http://m2.example:8088/ws/v1/cluster/info": ha_info("standby")}
    got = check(World(open={("m1.example", 8032), ("m2.example", 8032)}, info=standby), site)["resourcemanager"]
    assert got.outcome == Outcome.FAIL and got.detail.startswith("no ResourceManager says it is active")
    assert "yarn rmadmin -getAllServiceState" in got.fix
    got = check(World(open={("m1.example", 8032), ("m2.example", 8032)}), site)["resourcemanager"]
    assert got.outcome == Outcome.WARN and "which is active is unknown" in got.detail  # web UIs do not answer


# --- 4. namenode ---------------------------------------------------------------------------


def test_unreachable_namenode_fails_naming_fs_default_fs_and_hdfs_home_is_skipped(site):
    got = check(World(open={("rm.example", 8032)}), site)
    nn = got["namenode"]
    assert nn.outcome == Outcome.FAIL
    assert nn.detail == ("the NameNode at nn.example:8020 is unreachable (Connection refused) "
                         "(fs.defaultFS hdfs://nn.example:8020)")
    assert nn.fix == (f"start the NameNode, or set fs.defaultFS in {site['conf'] / 'core-site.xml'} to "
                      "hdfs://<NameNode host>:<RPC port>")
    assert (got["hdfs-home"].outcome, got["hdfs-home"].detail) == (Outcome.SKIP, "needs namenode")


def test_namenode_default_port_is_8020(site):
    write_conf(site["conf"], core={"fs.defaultFS": "hdfs://nn.example"})
    world = World()
    assert check(world, site)["namenode"].outcome == Outcome.OK
    assert ("connect", "nn.example", 8020) in world.calls


@pytest.mark.parametrize("fs", ["viewfs://cluster/", "file:///", "s3a://bucket/"])
def test_namenode_of_another_scheme_is_skipped_with_the_reason(site, fs):
    write_conf(site["conf"], core={"fs.defaultFS": fs})
    got = check(World(), site)
    assert got["namenode"].outcome == Outcome.SKIP and got["namenode"].detail.startswith(f"fs.defaultFS is {fs}")
    assert got["hdfs-home"].detail == "needs namenode"


def test_namenode_ha_nameservice_checks_each_namenode(site):
    write_conf(site["conf"], core={"fs.defaultFS": "hdfs://ns1"},
               hdfs={"dfs.nameservices": "ns1", "dfs.ha.namenodes.ns1": "nn1,nn2",
                     "dfs.namenode.rpc-address.ns1.nn1": "n1.example:8020",
                     "dfs.namenode.rpc-address.ns1.nn2": "n2.example:8020"})
    got = check(World(open={("rm.example", 8032), ("n2.example", 8020)}), site)["namenode"]
    assert got.outcome == Outcome.WARN
    assert got.detail == ("nn1 at n1.example:8020: unreachable (Connection refused); nn2 at n2.example:8020: "
                          "reachable (fs.defaultFS hdfs://ns1)")
    got = check(World(open={("rm.example", 8032)}), site)["namenode"]
    assert got.outcome == Outcome.FAIL and "dfs.namenode.rpc-address.ns1.<id>" in got.fix


# --- 5. hdfs-home --------------------------------------------------------------------------


def test_hdfs_home_not_writable_fails_with_the_mkdir_fix(site):
    got = check(World(hdfs_error=PermissionError(13, "Permission denied")), site)["hdfs-home"]
    assert got.outcome == Outcome.FAIL
    assert got.detail.startswith("cannot create and delete hdfs:///user/alice/.tfyarn/doctor-")
    assert got.detail.endswith(" as alice: Permission denied")
    assert "hdfs dfs -mkdir -p /user/alice && hdfs dfs -chown alice /user/alice" in got.fix


def test_hdfs_home_without_an_hdfs_client_is_skipped(site):
    got = check(World(hdfs_error=ImportError("No module named 'hdfs_native'")), site)["hdfs-home"]
    assert got.outcome == Outcome.SKIP and "hdfs_native" in got.detail


def test_hdfs_user_is_the_login_name_without_hadoop_user_name(site):
    import getpass

    world = World()
    check(world, site, HADOOP_USER_NAME=None)
    uri = next(c[2] for c in world.calls if c[0] == "hdfs")
    assert uri.startswith(f"hdfs:///user/{getpass.getuser()}/.tfyarn/doctor-")


# --- 6. kerberos ---------------------------------------------------------------------------


KERBEROS = {"hadoop.security.authentication": "kerberos"}


def test_kerberos_without_a_ticket_fails_naming_kinit_and_the_keytab(site):
    write_conf(site["conf"], core=KERBEROS)
    world = World(commands={"yarn": (0, ""), "klist": (1, "")})
    got = check(world, site)
    assert got["kerberos"].outcome == Outcome.FAIL
    assert "no valid ticket (`klist -s` failed)" in got["kerberos"].detail
    assert "kinit" in got["kerberos"].fix and "TFYARN_KEYTAB=" in got["kerberos"].fix
    assert "TFYARN_PRINCIPAL=" in got["kerberos"].fix
    assert any(c[:2] == ("run", ("klist", "-s")) for c in world.calls)


def test_kerberos_with_a_ticket_passes(site):
    write_conf(site["conf"], core={"hadoop.security.authentication": "KERBEROS"})  # as Hadoop: any case
    got = check(World(commands={"yarn": (0, ""), "klist": (0, "")}), site)["kerberos"]
    assert (got.outcome, got.detail) == (Outcome.OK, "Kerberos: a valid ticket (klist -s)")


def test_kerberos_without_klist_fails(site):
    write_conf(site["conf"], core=KERBEROS)
    got = check(World(commands={"yarn": (0, "")}), site)["kerberos"]
    assert got.outcome == Outcome.FAIL and "no `klist`" in got.detail and "kinit" in got.fix


def test_kerberos_with_a_keytab_passes_without_asking_klist(site, tmp_path):
    write_conf(site["conf"], core=KERBEROS)
    keytab = tmp_path / "alice.keytab"
    keytab.write_bytes(b"\x05\x02")
    world = World(commands={"yarn": (0, "")})  # no klist: it must not be needed
    got = check(world, site, TFYARN_KEYTAB=str(keytab), TFYARN_PRINCIPAL="alice@EXAMPLE.COM")["kerberos"]
    assert got.outcome == Outcome.OK and str(keytab) in got.detail and "alice@EXAMPLE.COM" in got.detail
    got = check(World(), site, TFYARN_KEYTAB=str(tmp_path / "none.keytab"), TFYARN_PRINCIPAL="a@B")["kerberos"]
    assert got.outcome == Outcome.FAIL and "is not a file" in got.detail


def test_kerberized_hdfs_failure_mentions_the_ticket(site):
    write_conf(site["conf"], core=KERBEROS)
    world = World(hdfs_error=OSError("GSSAPI: no credentials"), commands={"yarn": (0, ""), "klist": (0, "")})
    got = check(world, site)["hdfs-home"]
    assert got.outcome == Outcome.FAIL and "Kerberos ticket" in got.fix


def test_kerberized_without_ticket_or_keytab_hdfs_home_is_skipped_without_touching_hdfs(site):
    """hdfs-native 0.14 crashed the doctor (SIGSEGV, about 4 runs in 10 here) setting up a Kerberos client
    with no ticket: without one, hdfs-home does not try, and only kerberos FAILs, with the fix."""
    write_conf(site["conf"], core=KERBEROS)
    world = World()  # klist -s exits 1: no ticket
    got = check(world, site)
    assert got["hdfs-home"].outcome == Outcome.SKIP and "no ticket or keytab" in got["hdfs-home"].detail
    assert [c for c in world.calls if c[0] == "hdfs"] == []
    assert [n for n, r in got.items() if r.outcome == Outcome.FAIL] == ["kerberos"]
    assert "kinit" in got["kerberos"].fix


# --- 7. gpus -------------------------------------------------------------------------------


def test_no_gpu_type_warns_with_the_resource_types_fix(site):
    got = check(World(rest={f"{RM_WEB}/conf": CONF_CPU, f"{RM_WEB}/ws/v1/cluster/scheduler": QUEUES}), site)
    gpus = got["gpus"]
    assert gpus.outcome == Outcome.WARN and "no yarn.io/gpu resource type" in gpus.detail
    assert "resource-types.xml" in gpus.fix and "yarn.resource-types=yarn.io/gpu" in gpus.fix
    assert doctor.exit_code(list(got.values())) == 0  # CPU jobs still work


def test_gpu_type_declared_but_no_gpu_on_any_node_warns(site):
    world = World(nodes=[NodeCapacity("cpu1.example:8041", 8192, 8, 0)])
    got = check(world, site)["gpus"]
    assert got.outcome == Outcome.WARN and "(cpu1.example 0)" in got.detail
    assert "yarn.nodemanager.resource-plugins=yarn.io/gpu" in got.fix


def test_no_running_node_fails(site):
    got = check(World(nodes=[]), site)["gpus"]
    assert got.outcome == Outcome.FAIL and "no RUNNING NodeManager" in got.detail and got.fix


def test_gpus_that_cannot_be_read_are_skipped_with_why(site):
    got = check(World(rest={f"{RM_WEB}/conf": FetchError("HTTP 401 Unauthorized")}), site)["gpus"]
    assert got.outcome == Outcome.SKIP
    assert got.detail == f"cannot read the ResourceManager's configuration at {RM_WEB}/conf (HTTP 401 Unauthorized)"
    got = check(World(nodes=FetchError("timed out")), site)["gpus"]
    assert got.outcome == Outcome.SKIP and "timed out" in got.detail


# --- 8. queues ------------------------------------------------------------------------------


def test_default_queue_missing_fails_naming_the_queues_that_take_jobs(site):
    world = World(rest={f"{RM_WEB}/conf": CONF_GPU,
                        f"{RM_WEB}/ws/v1/cluster/scheduler": capacity(leaf("root.research"), leaf("root.prod"))})
    got = check(world, site)["queues"]
    assert got.outcome == Outcome.FAIL
    assert got.detail == "leaf queues that take jobs: prod, research; this cluster has no queue 'default'"
    assert got.fix.startswith("submit with --queue prod")


def test_the_queue_asked_for_is_checked(site):
    assert check(World(), site, queue="research")["queues"].outcome == Outcome.OK
    got = check(World(), site, queue="old")["queues"]
    assert got.outcome == Outcome.FAIL and "old is STOPPED" in got.detail


def test_other_schedulers_and_unreadable_answers(site):
    fair = json.dumps({"scheduler": {"schedulerInfo": {"type": "fairScheduler"}}}).encode()
    got = check(World(rest={f"{RM_WEB}/ws/v1/cluster/scheduler": fair, f"{RM_WEB}/conf": CONF_GPU}), site)
    assert got["queues"].outcome == Outcome.OK and "not the capacity scheduler" in got["queues"].detail
    got = check(World(rest={f"{RM_WEB}/ws/v1/cluster/scheduler": b"<html>", f"{RM_WEB}/conf": CONF_GPU}), site)
    assert got["queues"].outcome == Outcome.SKIP and "not JSON" in got["queues"].detail


# --- 9. python-env and 10. docker ----------------------------------------------------------


def test_python_env_on_a_real_cluster_ships_a_virtualenv(site):
    got = check(World(can_pack=True), site)["python-env"]
    assert (got.outcome, got.detail) == (Outcome.OK, "python_env auto: packed (the cluster is not this machine's "
                                         "local one; this environment /opt/venv is shipped)")


def test_python_env_that_cannot_be_shipped_warns_with_the_ways_out(site):
    got = check(World(), site)["python-env"]
    assert got.outcome == Outcome.WARN
    assert got.detail.startswith("python_env auto: local (the cluster is not this machine's local one, and this "
                                 "environment cannot be shipped: needs a virtualenv")
    assert "--python-env ENV.tar.gz" in got.fix and "--python-env local" in got.fix


def test_docker_runtime(site):
    key = "yarn.nodemanager.runtime.linux.allowed-runtimes"
    got = check(World(), site)["docker"]
    assert got.outcome == Outcome.SKIP and got.detail.startswith("--docker-image runs with the executor runtime")
    write_conf(site["conf"], yarn={key: "default,docker"})  # allowed, but not with the default executor
    got = check(World(), site)["docker"]
    assert got.outcome == Outcome.SKIP and got.detail.endswith(f"docker in {key} (default, docker)")
    lce = "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor"
    write_conf(site["conf"], yarn={key: "default,docker", "yarn.nodemanager.container-executor.class": lce})
    got = check(World(), site)["docker"]
    assert (got.outcome, got.detail) == (Outcome.OK, f"--docker-image runs with YARN's Docker runtime ({key}: "
                                                     "default, docker)")


# --- the command ----------------------------------------------------------------------------


def test_command_prints_one_line_per_check_and_exits_1_on_fail(site, monkeypatch):
    world = World(open={("nn.example", 8020)})
    monkeypatch.setattr(doctor_cmd, "real_probe", lambda: probe_of(world, site))
    res = CliRunner().invoke(cli, ["doctor"])
    assert res.exit_code == 1, res.output
    lines = res.stdout.splitlines()
    assert [line.split()[1] for line in lines] == list(doctor.NAMES)
    assert lines[2].startswith("FAIL  resourcemanager  the ResourceManager at rm.example:8032 is unreachable")
    assert "a submit would fail: fix resourcemanager first" in res.stderr

    res = CliRunner().invoke(cli, ["doctor", "--json", "--queue", "research"])
    assert res.exit_code == 1
    doc = json.loads(res.stdout)
    assert [d["outcome"] for d in doc][:3] == ["OK", "OK", "FAIL"]


def test_command_exits_0_when_a_submit_would_work(site, monkeypatch):
    monkeypatch.setattr(doctor_cmd, "real_probe", lambda: probe_of(World(), site))
    res = CliRunner().invoke(cli, ["doctor"])
    assert res.exit_code == 0, res.output
    assert all(line.split()[0] in ("OK", "WARN", "SKIP") for line in res.stdout.splitlines())


def test_help_teaches_the_checks_and_exit_codes():
    out = CliRunner().invoke(cli, ["doctor", "--help"], prog_name="tfyarn").output
    assert "Usage: tfyarn doctor [OPTIONS]" in out
    for name in doctor.NAMES:
        assert f"\n    {name} " in out, name
    assert "Exit codes" in out and "1  some check FAILed" in out
    assert "doctor" in CliRunner().invoke(cli, ["--help"]).output


# --- the real probes, without a cluster -------------------------------------------------------


def test_real_hdfs_probe_creates_and_deletes_through_the_storage_layer(tmp_path, monkeypatch):
    monkeypatch.setenv(protocol.ENV_HADOOP_CONF_DIR, str(tmp_path))  # restored after: the probe sets it
    target = tmp_path / "home" / ".tfyarn" / "doctor-1"
    doctor_cmd.hdfs_probe(tmp_path / "conf", f"file://{target}")
    assert target.parent.is_dir() and not target.exists()
    assert os.environ[protocol.ENV_HADOOP_CONF_DIR] == str(tmp_path / "conf")


def test_real_connect_to_a_closed_port_raises_oserror():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(OSError):
        doctor_cmd.connect("127.0.0.1", port)


def test_real_run_command_gives_status_and_output(tmp_path):
    script = executable(tmp_path / "yarn", "#!/bin/sh\necho out; echo err >&2; exit 3\n")
    assert doctor_cmd.run_command([str(script)], {"PATH": "/usr/bin:/bin"}, 10) == (3, "out\nerr\n")
    with pytest.raises(subprocess.TimeoutExpired):
        doctor_cmd.run_command(["sleep", "5"], {"PATH": "/usr/bin:/bin"}, 0.2)


def test_real_probe_reads_this_machine(monkeypatch, tmp_path):
    monkeypatch.setenv(protocol.ENV_CLUSTER_DIR, str(tmp_path))
    probe = doctor_cmd.real_probe()
    assert probe.local_conf_dir == tmp_path / "conf" and probe.local_bin_dir == tmp_path / "bin"
    assert probe.info is hadoopconf.http_fetch and probe.environ[protocol.ENV_CLUSTER_DIR] == str(tmp_path)
