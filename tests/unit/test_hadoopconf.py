"""Reading a Hadoop client configuration as Hadoop does: overrides and ``final``, ``${...}``, RM HA, HTTPS.

Config sets under confsets/ are shaped like real distributions' client configs (Apache's
own, an Ambari-managed HA pair, a Cloudera Manager HA pair with HTTPS_ONLY and Kerberos);
the rest are written into tmp dirs. Nothing here needs a network: the active RM is asked
through a fake fetch, or a server on 127.0.0.1.
"""

import getpass
import http.server
import json
import socket
import stat
import threading
from pathlib import Path

import pytest

from tfyarn import hadoop_env, hadoopconf, protocol
from tfyarn.errors import SpecError, UnreachableError
from tfyarn.hadoopconf import ResourceManager

CONFSETS = Path(__file__).parent / "confsets"


def site(conf: Path, filename: str, *props: tuple[str, str] | tuple[str, str, bool]) -> Path:
    """Write ``filename`` with ``props`` ((name, value) or (name, value, final)) in order."""
    body = "".join(
        f"<property><name>{p[0]}</name><value>{p[1]}</value>"
        f"{'<final>true</final>' if len(p) > 2 and p[2] else ''}</property>"
        for p in props
    )
    path = conf / filename
    path.write_text(f'<?xml version="1.0"?>\n<configuration>{body}</configuration>\n')
    return path


@pytest.fixture
def conf(tmp_path: Path) -> Path:
    d = tmp_path / "conf"
    d.mkdir()
    return d


def rms_of(conf_dir: Path) -> list[ResourceManager]:
    return hadoopconf.resource_managers(hadoopconf.load(conf_dir))


# -- the distributions' config sets --------------------------------------------
def test_apache_plain_one_rm_from_its_hostname():
    assert rms_of(CONFSETS / "apache-plain") == [ResourceManager("", "rm.example.com", 8032, "http://rm.example.com:8088")]
    core = hadoopconf.load(CONFSETS / "apache-plain", hadoopconf.CORE_FILES)
    assert core.get("hadoop.tmp.dir") == f"/tmp/hadoop-{getpass.getuser()}"


def test_ambari_ha_pair_from_per_id_hostnames():
    assert rms_of(CONFSETS / "ambari-ha") == [
        ResourceManager("rm1", "master1.example.com", 8032, "http://master1.example.com:8088"),
        ResourceManager("rm2", "master2.example.com", 8032, "http://master2.example.com:8088"),
    ]
    # a yarn-site value refers to a core-site property: YarnConfiguration loads both
    conf = hadoopconf.load(CONFSETS / "ambari-ha")
    assert conf.get("yarn.resourcemanager.zk-address").startswith("zk1.example.com:2181,")
    assert not hadoop_env.kerberized(CONFSETS / "ambari-ha")


def test_cloudera_ha_pair_https_only():
    assert rms_of(CONFSETS / "cm-ha-https") == [
        ResourceManager("rm53", "rma.example.com", 8032, "https://rma.example.com:8090"),
        ResourceManager("rm61", "rmb.example.com", 8032, "https://rmb.example.com:8090"),
    ]
    assert hadoop_env.kerberized(CONFSETS / "cm-ha-https")


# -- ResourceManager endpoints -------------------------------------------------
def test_no_yarn_site_is_rm_on_all_addresses(conf):
    assert rms_of(conf) == [ResourceManager("", "0.0.0.0", 8032, "http://0.0.0.0:8088")]


def test_explicit_addresses_win_over_the_hostname(conf):
    site(conf, "yarn-site.xml", ("yarn.resourcemanager.hostname", "rm.example"),
         ("yarn.resourcemanager.address", "rpc.example:9032"),
         ("yarn.resourcemanager.webapp.address", "web.example:9088"))
    assert rms_of(conf) == [ResourceManager("", "rpc.example", 9032, "http://web.example:9088")]


def test_https_only_without_ha(conf):
    site(conf, "yarn-site.xml", ("yarn.resourcemanager.hostname", "rm.example"), ("yarn.http.policy", "HTTPS_ONLY"),
         ("yarn.resourcemanager.webapp.address", "rm.example:8088"))  # the HTTP address is not the one used
    assert rms_of(conf)[0].web == "https://rm.example:8090"
    site(conf, "yarn-site.xml", ("yarn.http.policy", " https_only "),
         ("yarn.resourcemanager.webapp.https.address", "rm.example:8443"))
    assert rms_of(conf)[0].web == "https://rm.example:8443"
    site(conf, "yarn-site.xml", ("yarn.resourcemanager.hostname", "rm.example"), ("yarn.http.policy", "HTTP_ONLY"))
    assert rms_of(conf)[0].web == "http://rm.example:8088"


def test_ha_ids_are_trimmed_and_explicit_ones_win(conf):
    site(conf, "yarn-site.xml", ("yarn.resourcemanager.ha.enabled", "TRUE"),
         ("yarn.resourcemanager.ha.rm-ids", " rm1 , rm2 ,"),
         ("yarn.resourcemanager.hostname.rm1", "a.example"), ("yarn.resourcemanager.hostname.rm2", "b.example"),
         ("yarn.resourcemanager.address.rm2", "b-rpc.example:8050"),
         ("yarn.resourcemanager.address", "ignored.example:1"))  # the non-HA address is not an RM of the pair
    assert rms_of(conf) == [ResourceManager("rm1", "a.example", 8032, "http://a.example:8088"),
                            ResourceManager("rm2", "b-rpc.example", 8050, "http://b.example:8088")]


@pytest.mark.parametrize("props", [
    [("yarn.resourcemanager.ha.enabled", "true")],  # no rm-ids
    [("yarn.resourcemanager.ha.enabled", "false"), ("yarn.resourcemanager.ha.rm-ids", "rm1,rm2")],
    [("yarn.resourcemanager.ha.rm-ids", "rm1,rm2")],  # HA not enabled
])
def test_ha_needs_both_enabled_and_ids(conf, props):
    site(conf, "yarn-site.xml", ("yarn.resourcemanager.hostname", "one.example"),
         ("yarn.resourcemanager.hostname.rm1", "a.example"), *props)
    assert rms_of(conf) == [ResourceManager("", "one.example", 8032, "http://one.example:8088")]


def test_ha_id_without_any_address_is_named(conf):
    path = site(conf, "yarn-site.xml", ("yarn.resourcemanager.ha.enabled", "true"),
                ("yarn.resourcemanager.ha.rm-ids", "rm1,rm2"), ("yarn.resourcemanager.hostname.rm1", "a.example"))
    with pytest.raises(SpecError) as e:
        rms_of(conf)
    assert str(e.value) == (f"{path}: the ResourceManager rm2 of yarn.resourcemanager.ha.rm-ids has neither "
                            "yarn.resourcemanager.address.rm2 nor yarn.resourcemanager.hostname.rm2; set one")


@pytest.mark.parametrize("key,addr", [
    ("yarn.resourcemanager.address.rm2", "b.example:http"),
    ("yarn.resourcemanager.address.rm2", "b.example:70000"),
    ("yarn.resourcemanager.address.rm2", "b.example"),
    ("yarn.resourcemanager.webapp.address.rm1", ":8088"),
    ("yarn.resourcemanager.address.rm2", "b.example:\u00b2"),  # a digit to str.isdigit, not to int()
])
def test_bad_ha_address_names_file_and_property(conf, key, addr):
    path = site(conf, "yarn-site.xml", ("yarn.resourcemanager.ha.enabled", "true"),
                ("yarn.resourcemanager.ha.rm-ids", "rm1,rm2"), ("yarn.resourcemanager.hostname.rm1", "a.example"),
                ("yarn.resourcemanager.hostname.rm2", "b.example"), (key, addr))
    with pytest.raises(SpecError) as e:
        rms_of(conf)
    assert str(e.value) == (f"{path}: {key} gives the address {addr!r}, which is not host:port with a port "
                            "from 1 to 65535; fix the property")


def test_an_address_set_in_core_site_is_blamed_there(conf):
    core = site(conf, "core-site.xml", ("yarn.resourcemanager.address", "rm:0"))
    site(conf, "yarn-site.xml")
    with pytest.raises(SpecError, match=rf"^{core}: yarn.resourcemanager.address gives the address 'rm:0'"):
        rms_of(conf)


def test_an_unexpanded_reference_in_an_address_is_named(conf, monkeypatch):
    monkeypatch.delenv("TFYARN_TEST_RM_HOST", raising=False)
    path = site(conf, "yarn-site.xml", ("yarn.resourcemanager.hostname", "${env.TFYARN_TEST_RM_HOST}"))
    with pytest.raises(SpecError) as e:
        rms_of(conf)
    assert str(e.value).startswith(f"{path}: yarn.resourcemanager.hostname gives the address "
                                   "'${env.TFYARN_TEST_RM_HOST}:8032', with a reference Hadoop cannot expand")
    monkeypatch.setenv("TFYARN_TEST_RM_HOST", "rm.from-env.example")
    assert rms_of(conf)[0].address == "rm.from-env.example:8032"


# -- ${...} expansion ----------------------------------------------------------
ENV = {"SET": "from-env", "EMPTY": ""}


@pytest.mark.parametrize("value,expected", [
    ("${a}:8032", "A:8032"),
    ("${chain}", "A/A"),  # a reference to a reference
    ("${user.name}", getpass.getuser()),
    ("${user.home}/x", f"{Path.home()}/x"),
    ("${java.io.tmpdir}/hadoop", "/tmp/hadoop"),
    ("${env.SET}", "from-env"),
    ("${env.UNSET}", "${env.UNSET}"),
    ("${env.SET:-d}", "from-env"),
    ("${env.EMPTY:-d}", "d"),
    ("${env.UNSET:-d}", "d"),
    ("${env.EMPTY-d}", ""),  # `-`: only an unset variable takes the default
    ("${env.UNSET-d}", "d"),
    ("${env.UNSET:-${a}}", "A"),  # the default is expanded in turn
    ("${env.prop}", "a property named env.prop"),  # an unset variable falls back to a property
    ("${user.name-x}", "${user.name-x}"),  # no such property
    ("${nope}/${a}", "${nope}/${a}"),  # Hadoop stops at the first reference it cannot resolve
    ("${a}/${nope}", "A/${nope}"),
    ("${self}", "${self}"),
    ("${ping}", "${ping}"),  # a cycle: left as written where Hadoop would give up
    ("$a ${ a} ${}", "$a ${ a} ${}"),  # not references
])
def test_expand(value, expected):
    props = {"a": "A", "chain": "${a}/${a}", "self": "x${self}", "ping": "${pong}", "pong": "${ping}",
             "env.prop": "a property named env.prop"}
    assert hadoopconf.expand(value, props, ENV) == expected


def test_expansion_is_bounded_at_twenty_substitutions():
    chain = {f"p{i}": f"${{p{i + 1}}}" for i in range(30)} | {"p30": "end"}
    assert hadoopconf.expand("${p11}", chain, {}) == "end"  # 20 substitutions
    assert hadoopconf.expand("${p9}", chain, {}) == "${p9}"  # 22 would be needed


def test_system_properties_win_over_properties(conf):
    site(conf, "yarn-site.xml", ("user.name", "someone-else"), ("dir", "/data/${user.name}"))
    assert hadoopconf.load(conf).get("dir") == f"/data/{getpass.getuser()}"


def test_load_takes_the_environment_it_is_given(conf):
    site(conf, "yarn-site.xml", ("yarn.resourcemanager.hostname", "${env.RM:-fallback.example}"))
    assert hadoopconf.load(conf, environ={"RM": "rm.example"}).get("yarn.resourcemanager.hostname") == "rm.example"
    assert hadoopconf.load(conf, environ={}).get("yarn.resourcemanager.hostname") == "fallback.example"


def test_cycles_across_files_stay_unexpanded(conf):
    site(conf, "core-site.xml", ("a", "${b}"))
    site(conf, "yarn-site.xml", ("b", "x-${a}"))
    props = hadoopconf.load(conf).props
    assert props["a"] == "${b}" and props["b"] == "x-${a}"


# -- overrides and final -------------------------------------------------------
def test_later_files_override_unless_final(conf):
    core = site(conf, "core-site.xml", ("fs.defaultFS", "hdfs://admin", True), ("plain", "core"),
                ("hadoop.security.authentication", "kerberos", True))
    yarn = site(conf, "yarn-site.xml", ("fs.defaultFS", "hdfs://user"), ("plain", "yarn"),
                ("hadoop.security.authentication", "simple"))
    c = hadoopconf.load(conf)
    assert c.get("fs.defaultFS") == "hdfs://admin" and c.where("fs.defaultFS") == core
    assert c.get("plain") == "yarn" and c.where("plain") == yarn
    assert hadoop_env.read_conf(conf, "yarn-site.xml")["hadoop.security.authentication"] == "kerberos"


def test_final_within_one_file_and_later_final_wins_over_earlier_plain(conf):
    site(conf, "core-site.xml", ("x", "core"))
    site(conf, "yarn-site.xml", ("x", "first", True), ("x", "second"), ("y", "1"), ("y", "2"))
    c = hadoopconf.load(conf)
    assert (c.get("x"), c.get("y")) == ("first", "2")


def test_references_see_the_last_value_from_any_file(conf):
    site(conf, "core-site.xml", ("host", "core.example"), ("addr", "${host}:1"))
    site(conf, "yarn-site.xml", ("host", "yarn.example"))
    assert hadoopconf.load(conf).get("addr") == "yarn.example:1"
    assert hadoopconf.load(conf, hadoopconf.CORE_FILES).get("addr") == "core.example:1"


def test_attribute_form_xinclude_and_missing_value(conf):
    (conf / "mounts.xml").write_text("<configuration><property><name>included</name><value>yes</value>"
                                     "</property></configuration>")
    (conf / "yarn-site.xml").write_text(
        '<configuration xmlns:xi="http://www.w3.org/2001/XInclude">'
        '<property name="attr" value=" v " final="true"/><property><name>nov</name></property>'
        '<xi:include href="mounts.xml"/><property><name>attr</name><value>later</value></property>'
        "</configuration>")
    props = hadoopconf.load(conf).props
    assert props == {"attr": "v", "included": "yes"}


# -- errors --------------------------------------------------------------------
def test_bad_xml_is_one_line_naming_the_file(conf):
    site(conf, "yarn-site.xml")
    core = conf / "core-site.xml"
    core.write_text("<configuration><property><name>x</name>")
    with pytest.raises(SpecError) as e:
        hadoopconf.load(conf)
    msg = str(e.value)
    assert msg.startswith(f"{core}: not valid XML (") and "line 1" in msg and "\n" not in msg
    assert msg.endswith(f"fix the file, or point {protocol.ENV_HADOOP_CONF_DIR} at a cluster's configuration")


def test_unreadable_file_is_one_line(conf):
    (conf / "yarn-site.xml").mkdir()  # unreadable as a file even to root
    with pytest.raises(SpecError, match=rf"^{conf / 'yarn-site.xml'}: cannot be read \(Is a directory\)"):
        hadoopconf.load(conf)


def test_a_broken_include_names_the_including_file(conf):
    path = conf / "yarn-site.xml"
    path.write_text('<configuration xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="gone.xml"/>'
                    "</configuration>")
    with pytest.raises(SpecError, match=rf"^{path}: an <xi:include> cannot be read \(.*gone.xml\)"):
        hadoopconf.load(conf)


# -- where the config dir is ---------------------------------------------------
@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    d = {name: tmp_path / name for name in ("hadoop_conf", "yarn_conf", "home", "local")}
    for p in (d["hadoop_conf"], d["yarn_conf"], d["home"] / "etc" / "hadoop", d["local"]):
        p.mkdir(parents=True)
    site(d["local"], "yarn-site.xml")
    return d


H, Y, HOME = protocol.ENV_HADOOP_CONF_DIR, protocol.ENV_YARN_CONF_DIR, protocol.ENV_HADOOP_HOME


@pytest.mark.parametrize("env,expected", [
    ({H: "hadoop_conf", Y: "yarn_conf", HOME: "home"}, ("hadoop_conf", H)),
    ({Y: "yarn_conf", HOME: "home"}, ("yarn_conf", Y)),
    ({H: "", Y: "yarn_conf"}, ("yarn_conf", Y)),  # set but empty is unset
    ({HOME: "home"}, ("home/etc/hadoop", f"{HOME}/etc/hadoop")),
    ({HOME: "no-such-home"}, ("local", "the local cluster")),
    ({}, ("local", "the local cluster")),
])
def test_search_order(dirs, tmp_path, env, expected):
    environ = {k: str(tmp_path / v) if v else v for k, v in env.items()}
    assert hadoopconf.find_conf_dir(environ, local=dirs["local"]) == (tmp_path / expected[0], expected[1])


def test_search_finds_nothing_without_a_local_yarn_site(tmp_path):
    assert hadoopconf.find_conf_dir({}, local=tmp_path) is None


@pytest.fixture
def clean_env(tmp_path, monkeypatch):
    for var in (H, Y, HOME):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(protocol.ENV_CLUSTER_DIR, str(tmp_path / "no-cluster"))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    return monkeypatch


def test_discover_uses_yarn_conf_dir_and_hadoop_homes_yarn(tmp_path, clean_env):
    home = tmp_path / "hadoop"
    (home / "etc" / "hadoop").mkdir(parents=True)
    (home / "bin").mkdir()
    yarn = home / "bin" / "yarn"
    yarn.write_text("#!/bin/sh\nexit 1\n")
    yarn.chmod(yarn.stat().st_mode | stat.S_IEXEC)
    clean_env.setenv(HOME, str(home))
    env = hadoop_env.discover()
    assert env.conf_dir == home / "etc" / "hadoop"
    assert env.path.split(":")[0] == str(home / "bin")
    clean_env.setenv(Y, str(tmp_path))
    assert hadoop_env.discover().conf_dir == tmp_path


def test_discover_names_every_place_it_looked(clean_env):
    with pytest.raises(UnreachableError, match=f"no Hadoop cluster configured \\({H}, {Y} and {HOME} are unset"):
        hadoop_env.discover()
    clean_env.setenv(Y, "/no/such/dir")
    with pytest.raises(UnreachableError, match=f"^{Y}=/no/such/dir is not a directory; "):
        hadoop_env.discover()


# -- the active ResourceManager ------------------------------------------------
RM1 = ResourceManager("rm1", "a.example", 8032, "http://a.example:8088")
RM2 = ResourceManager("rm2", "b.example", 8032, "http://b.example:8088")


def fake_fetch(answers: dict[str, object], asked: list[str] | None = None) -> hadoopconf.Fetch:
    """A fetch answering each RM's cluster info from ``answers`` (host -> haState, bytes or an exception)."""

    def fetch(url: str) -> bytes:
        if asked is not None:
            asked.append(url)
        answer = answers[url.split("//")[1].split(":")[0]]
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, bytes):
            return answer
        return json.dumps({"clusterInfo": {"id": 1, "haState": answer}}).encode()

    return fetch


def test_standby_then_active_picks_the_active():
    asked: list[str] = []
    pick = hadoopconf.pick_active([RM1, RM2], fake_fetch({"a.example": "STANDBY", "b.example": "ACTIVE"}, asked))
    assert pick.active == RM2
    assert pick.reasons == ((RM1, "answered STANDBY"),)
    assert asked == ["http://a.example:8088/ws/v1/cluster/info", "http://b.example:8088/ws/v1/cluster/info"]


def test_the_first_active_is_the_only_one_asked():
    asked: list[str] = []
    pick = hadoopconf.pick_active([RM1, RM2], fake_fetch({"a.example": "ACTIVE", "b.example": "STANDBY"}, asked))
    assert pick.active == RM1 and pick.reasons == () and len(asked) == 1


def test_first_down_picks_the_second():
    fetch = fake_fetch({"a.example": ConnectionRefusedError("Connection refused"), "b.example": "ACTIVE"})
    pick = hadoopconf.pick_active([RM1, RM2], fetch)
    assert pick.active == RM2 and pick.why() == "rm1 at a.example:8032: Connection refused"


def test_none_answers_is_none_with_every_reason():
    fetch = fake_fetch({"a.example": TimeoutError("timed out"),
                        "b.example": OSError("HTTP 307 Temporary Redirect, redirecting to http://a.example:8088/")})
    pick = hadoopconf.pick_active([RM1, RM2], fetch)
    assert pick.active is None
    assert pick.why() == ("rm1 at a.example:8032: timed out; rm2 at b.example:8032: HTTP 307 Temporary Redirect, "
                          "redirecting to http://a.example:8088/")


def test_answers_that_are_not_active():
    fetch = fake_fetch({"a.example": b"<html>not json</html>", "b.example": b'{"clusterInfo": {"id": 1}}'})
    pick = hadoopconf.pick_active([RM1, RM2], fetch)
    assert pick.active is None
    assert [r for _, r in pick.reasons] == ["answered an answer that is not cluster info", "answered no haState"]


def test_a_lone_rm_is_active_if_it_answers_at_all():
    lone = ResourceManager("", "a.example", 8032, "http://a.example:8088")
    assert hadoopconf.pick_active([lone], fake_fetch({"a.example": b'{"clusterInfo": {}}'})).active == lone
    down = hadoopconf.pick_active([lone], fake_fetch({"a.example": OSError("Connection refused")}))
    assert down.active is None and down.why() == "a.example:8032: Connection refused"


# -- over real HTTP, on 127.0.0.1 ----------------------------------------------
@pytest.fixture
def rm_pair():
    """Two RM web servers: the first a standby redirecting to the second, the active one."""
    servers: list[http.server.HTTPServer] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            if self.server is servers[0]:
                self.send_response(307)
                self.send_header("Location", f"http://127.0.0.1:{servers[1].server_address[1]}{self.path}")
                self.end_headers()
                return
            body = json.dumps({"clusterInfo": {"haState": "ACTIVE"}}).encode()
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    for _ in range(2):
        servers.append(http.server.HTTPServer(("127.0.0.1", 0), Handler))
        threading.Thread(target=servers[-1].serve_forever, daemon=True).start()
    yield [s.server_address[1] for s in servers]
    for s in servers:
        s.shutdown()
        s.server_close()


def test_a_standby_redirect_is_not_taken_for_its_target(rm_pair):
    standby, active = rm_pair
    rms = [ResourceManager(f"rm{i + 1}", "127.0.0.1", 8032, f"http://127.0.0.1:{p}") for i, p in enumerate(rm_pair)]
    with pytest.raises(OSError, match=f"HTTP 307 .*redirecting to http://127.0.0.1:{active}/ws/v1/cluster/info"):
        hadoopconf.http_fetch(rms[0].web + hadoopconf.CLUSTER_INFO)
    pick = hadoopconf.pick_active(rms)
    assert pick.active == rms[1]
    assert pick.reasons[0][0] == rms[0] and "HTTP 307" in pick.reasons[0][1]


# -- through hadoop_env --------------------------------------------------------
def ha_site(conf: Path, port1: int, port2: int) -> None:
    site(conf, "yarn-site.xml", ("yarn.resourcemanager.ha.enabled", "true"),
         ("yarn.resourcemanager.ha.rm-ids", "rm1,rm2"),
         ("yarn.resourcemanager.address.rm1", f"127.0.0.1:{port1}"),
         ("yarn.resourcemanager.address.rm2", f"127.0.0.1:{port2}"),
         ("yarn.resourcemanager.webapp.address.rm1", "a.example:8088"),
         ("yarn.resourcemanager.webapp.address.rm2", "b.example:8088"))


def test_hadoop_env_talks_to_the_active_rm_and_asks_once(conf, monkeypatch):
    ha_site(conf, 1, 2)
    asked: list[str] = []
    monkeypatch.setattr(hadoop_env, "_active", {})
    monkeypatch.setattr(hadoop_env, "_fetch", fake_fetch({"a.example": "STANDBY", "b.example": "ACTIVE"}, asked))
    assert hadoop_env.rm_web(conf) == "http://b.example:8088"
    assert hadoop_env.rm_address(conf) == ("127.0.0.1", 2)
    assert len(asked) == 2  # the choice is kept for the process


def test_hadoop_env_falls_back_to_the_first_rm(conf, monkeypatch):
    ha_site(conf, 1, 2)
    monkeypatch.setattr(hadoop_env, "_active", {})
    monkeypatch.setattr(hadoop_env, "_fetch", fake_fetch({"a.example": OSError("down"), "b.example": OSError("down")}))
    assert hadoop_env.rm_web(conf) == "http://a.example:8088"


def test_a_lone_rm_is_not_asked(conf, monkeypatch):
    site(conf, "yarn-site.xml", ("yarn.resourcemanager.hostname", "rm.example"))
    monkeypatch.setattr(hadoop_env, "_fetch", fake_fetch({}))  # would raise KeyError if asked
    assert hadoop_env.rm_web(conf) == "http://rm.example:8088"


def test_check_reachable_takes_any_rm_and_names_every_one(conf):
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(8)
        ha_site(conf, 1, listening.getsockname()[1])
        hadoop_env.check_reachable(hadoop_env.HadoopEnv(conf_dir=conf, path=""))  # rm2 answers
    ha_site(conf, 1, 1)
    with pytest.raises(UnreachableError) as e:
        hadoop_env.check_reachable(hadoop_env.HadoopEnv(conf_dir=conf, path=""))
    assert str(e.value).startswith("no ResourceManager is reachable: rm1 at 127.0.0.1:1 (Connection refused), "
                                   "rm2 at 127.0.0.1:1 (Connection refused); start the local cluster")
