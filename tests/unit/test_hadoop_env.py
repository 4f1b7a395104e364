"""Reading a cluster's Hadoop configuration: broken files and addresses are one Error line, not a traceback.

The CLI cases run the real `tfyarn` as a subprocess with HADOOP_CONF_DIR in a
tmp dir, so they need no cluster and can submit nothing.
"""
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tfyarn import hadoop_env
from tfyarn.errors import SpecError


def site(conf: Path, filename: str, **props: str) -> None:
    body = "".join(f"<property><name>{k.replace('_', '.')}</name><value>{v}</value></property>"
                   for k, v in props.items())
    (conf / filename).write_text(f"<configuration>{body}</configuration>")


@pytest.fixture
def conf(tmp_path: Path) -> Path:
    d = tmp_path / "conf"
    d.mkdir()
    return d


@pytest.mark.parametrize("value,expected", [
    ("kerberos", True), ("KERBEROS", True), (" Kerberos ", True), ("simple", False), ("SIMPLE", False),
])
def test_kerberized_ignores_case_as_hadoop_does(conf, value, expected):
    (conf / "core-site.xml").write_text(
        "<configuration><property><name>hadoop.security.authentication</name>"
        f"<value>{value}</value></property></configuration>")
    assert hadoop_env.kerberized(conf) is expected


def test_kerberized_off_without_core_site(conf):
    assert hadoop_env.kerberized(conf) is False


def test_truncated_xml_names_the_file(conf):
    (conf / "yarn-site.xml").write_text("<configuration><property><name>yarn.resourcemanager.address</name>")
    with pytest.raises(SpecError, match=r"yarn-site.xml: not valid XML \(.*line 1"):
        hadoop_env.read_conf(conf, "yarn-site.xml")


@pytest.mark.parametrize("addr", ["127.0.0.1:notaport", "127.0.0.1:99999", "127.0.0.1:0", "127.0.0.1", ":8032"])
def test_bad_rm_address_names_the_property(conf, addr):
    site(conf, "yarn-site.xml", yarn_resourcemanager_address=addr)
    with pytest.raises(SpecError, match=r"yarn.resourcemanager.address gives the address .* port from 1 to 65535"):
        hadoop_env.rm_address(conf)


def test_bad_rm_hostname_is_named_when_it_makes_the_address(conf):
    site(conf, "yarn-site.xml", yarn_resourcemanager_hostname="")
    with pytest.raises(SpecError, match=r"yarn.resourcemanager.hostname gives the address ':8032'"):
        hadoop_env.rm_address(conf)
    site(conf, "yarn-site.xml", yarn_resourcemanager_webapp_address="rm.example:x")
    with pytest.raises(SpecError, match=r"yarn.resourcemanager.webapp.address gives the address 'rm.example:x'"):
        hadoop_env.rm_web(conf)


def test_addresses_written_with_references_are_expanded(conf):
    # Many clusters' yarn-site.xml write addresses as Hadoop's ${...} references.
    site(conf, "yarn-site.xml", yarn_resourcemanager_hostname="rm.example",
         yarn_resourcemanager_address="${yarn.resourcemanager.hostname}:8032",
         yarn_resourcemanager_webapp_address="${yarn.resourcemanager.hostname}:8088")
    assert hadoop_env.rm_address(conf) == ("rm.example", 8032)
    assert hadoop_env.rm_web(conf) == "http://rm.example:8088"


def test_reference_cycles_stay_unexpanded(conf):
    site(conf, "yarn-site.xml", a="${b}", b="${a}")
    props = hadoop_env.read_conf(conf, "yarn-site.xml")
    assert props["a"] in ("${a}", "${b}")


# -- through the real CLI ------------------------------------------------------
def tfyarn_cli(*args: str, conf: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HADOOP_CONF_DIR": str(conf), "PATH": path or os.environ["PATH"]}
    return subprocess.run([sys.executable, "-m", "tfyarn", *args], capture_output=True, text=True, env=env,
                          timeout=60)


def one_error_line(res: subprocess.CompletedProcess[str], code: int, text: str) -> None:
    assert res.returncode == code, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    assert text in lines[0], lines[0]


@pytest.fixture
def yarn_on_path(tmp_path: Path) -> str:
    """A PATH whose `yarn` exists (discover() needs one); it fails if anything runs it."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    yarn = bindir / "yarn"
    yarn.write_text("#!/bin/sh\necho 'Error: JAVA_HOME is not set and could not be found.' >&2\nexit 1\n")
    yarn.chmod(yarn.stat().st_mode | stat.S_IEXEC)
    return f"{bindir}:{os.environ['PATH']}"


@pytest.mark.parametrize("filename", ["yarn-site.xml", "core-site.xml"])
def test_cli_truncated_site_file_is_one_line(conf, yarn_on_path, filename):
    site(conf, "yarn-site.xml", yarn_resourcemanager_address="127.0.0.1:1")
    (conf / filename).write_text("<configuration><property><name>x</name><value>")
    for args in (["list"], ["submit", "--", "python", "-c", "1"]):
        one_error_line(tfyarn_cli(*args, conf=conf, path=yarn_on_path), 2, f"{conf / filename}: not valid XML (")


@pytest.mark.parametrize("addr", ["127.0.0.1:notaport", "127.0.0.1:99999"])
def test_cli_bad_rm_port_is_one_line(conf, yarn_on_path, addr):
    site(conf, "yarn-site.xml", yarn_resourcemanager_address=addr)
    one_error_line(tfyarn_cli("list", conf=conf, path=yarn_on_path), 2,
                   f"yarn.resourcemanager.address gives the address '{addr}'")
    one_error_line(tfyarn_cli("submit", "--", "python", "-c", "1", conf=conf, path=yarn_on_path), 2,
                   "yarn.resourcemanager.address")


def test_cli_failing_yarn_classpath_is_one_line(conf, yarn_on_path):
    # An RM address that accepts connections, so the client gets as far as starting skein's driver,
    # which runs `yarn classpath --glob` (here: exits 1, as with a broken Hadoop client).
    with socket.socket() as rm:
        rm.bind(("127.0.0.1", 0))
        rm.listen(8)
        site(conf, "yarn-site.xml", yarn_resourcemanager_address=f"127.0.0.1:{rm.getsockname()[1]}")
        res = tfyarn_cli("list", conf=conf, path=yarn_on_path)
    one_error_line(res, 3, "`yarn classpath --glob` failed (exit 1: Error: JAVA_HOME is not set")
    assert "put a working Hadoop client's `yarn` first on PATH" in res.stderr
