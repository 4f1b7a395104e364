"""`tfyarn doctor` on the real local cluster: all clear, then each broken setup failing exactly its check.

Each broken setup is made in a tmp dir (a copy of the cluster's client config
with one property changed, an env without the cluster's `yarn`): the
cluster itself is never touched, and a check that fails names its fix.
"""
from __future__ import annotations

import getpass
import json
import os
import shutil
import socket
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from tests.integration.conftest import TFYARN, hadoop
from tfyarn import protocol

CHECKS = ["config", "yarn", "resourcemanager", "namenode", "hdfs-home", "kerberos", "gpus", "queues", "python-env",
          "docker"]


def run_doctor(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TFYARN, "doctor", *args], env=env, capture_output=True, text=True, timeout=300)


def doctor_json(env: dict[str, str]) -> tuple[int, dict[str, dict[str, Any]]]:
    """Exit code, and each check's result by name (in the order printed, which is asserted)."""
    res = run_doctor(env, "--json")
    try:
        results = json.loads(res.stdout)
    except ValueError:
        raise AssertionError(f"`tfyarn doctor --json` exited {res.returncode} without its JSON; "
                             f"stdout {res.stdout!r}, stderr:\n{res.stderr}") from None
    assert [r["name"] for r in results] == CHECKS, res.stdout + res.stderr
    return res.returncode, {r["name"]: r for r in results}


def closed_port() -> int:
    """A loopback port nothing listens on (bound by the OS, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def copy_conf(cluster, tmp_path: Path) -> Path:
    conf = tmp_path / "conf"
    shutil.copytree(cluster.layout.conf_dir, conf)
    return conf


def set_property(path: Path, name: str, value: str) -> None:
    """Set ``name`` in one Hadoop config file, adding it if absent."""
    tree = ET.parse(path)
    root = tree.getroot()
    for prop in root.iter("property"):
        if prop.findtext("name") == name:
            prop.find("value").text = value
            break
    else:
        prop = ET.SubElement(root, "property")
        ET.SubElement(prop, "name").text = name
        ET.SubElement(prop, "value").text = value
    tree.write(path)


def env_with(**changes: str | None) -> dict[str, str]:
    env = dict(os.environ)
    for k, v in changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def expect_only(env: dict[str, str], failing: str, *in_fix: str) -> dict[str, dict[str, Any]]:
    """The doctor exits 1 with exactly ``failing`` FAILed, its fix naming each of ``in_fix``, and its text
    line saying that fix."""
    code, results = doctor_json(env)
    assert code == 1, results
    assert [n for n, r in results.items() if r["outcome"] == "FAIL"] == [failing], results
    fix = results[failing]["fix"]
    for word in in_fix:
        assert word in fix, (word, results[failing])
    text = run_doctor(env)
    assert text.returncode == 1
    line = next(line for line in text.stdout.splitlines() if line.split()[1] == failing)
    assert line.startswith(f"FAIL  {failing}") and line.endswith(f"; fix: {fix}"), line
    return results


def test_doctor_on_the_healthy_cluster_passes_and_leaves_nothing_on_hdfs(cluster):
    env = dict(os.environ)
    res = run_doctor(env)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert [line.split()[1] for line in lines] == CHECKS, res.stdout
    for line in lines:
        assert line.split()[0] in ("OK", "WARN", "SKIP"), line
    assert "a submit would work" in res.stderr
    code, results = doctor_json(env)
    assert code == 0
    for name in ("config", "yarn", "resourcemanager", "namenode", "hdfs-home", "kerberos", "queues", "python-env"):
        assert results[name]["outcome"] == "OK", results[name]
    assert results["config"]["detail"].startswith(f"HADOOP_CONF_DIR={cluster.layout.conf_dir}: ")
    assert results["resourcemanager"]["detail"].startswith("127.0.0.1:8032 is reachable")
    assert results["queues"]["detail"].endswith("queue 'default' takes jobs")
    # python_env auto, looked up through each NodeManager's /proc/<pid>/root (node 2 has a /tmp of its own)
    assert results["python-env"]["detail"].startswith("python_env auto: local (every node of the local cluster sees ")
    assert results["gpus"]["outcome"] in ("OK", "WARN") and "yarn.io/gpu" in results["gpus"]["detail"]
    assert results["docker"]["outcome"] == "SKIP"  # the local cluster runs no LinuxContainerExecutor
    assert results["docker"]["detail"].startswith("--docker-image runs with the executor runtime"), results["docker"]
    user = env.get(protocol.ENV_HADOOP_USER_NAME) or getpass.getuser()
    assert f"/user/{user}/.tfyarn/doctor-" in results["hdfs-home"]["detail"]
    left = hadoop(cluster, "hdfs", "dfs", "-ls", f"/user/{user}/.tfyarn")
    assert "doctor-" not in left.stdout, left.stdout


def test_conf_dir_that_does_not_exist(cluster, tmp_path):
    results = expect_only(env_with(HADOOP_CONF_DIR=str(tmp_path / "missing")), "config", "HADOOP_CONF_DIR")
    assert results["resourcemanager"]["detail"] == "needs config"
    assert results["yarn"]["outcome"] == "OK"


def test_yarn_site_that_is_not_xml(cluster, tmp_path):
    conf = copy_conf(cluster, tmp_path)
    (conf / "yarn-site.xml").write_text("<configuration><property><name>oops</name>")
    results = expect_only(env_with(HADOOP_CONF_DIR=str(conf)), "config", "HADOOP_CONF_DIR")
    assert str(conf / "yarn-site.xml") in results["config"]["detail"]
    assert "not valid XML" in results["config"]["detail"]


def test_resourcemanager_on_a_closed_port(cluster, tmp_path):
    conf = copy_conf(cluster, tmp_path)
    port = closed_port()
    set_property(conf / "yarn-site.xml", "yarn.resourcemanager.address", f"127.0.0.1:{port}")
    results = expect_only(env_with(HADOOP_CONF_DIR=str(conf)), "resourcemanager", "yarn.resourcemanager.address",
                          str(conf / "yarn-site.xml"))
    assert f"127.0.0.1:{port} is unreachable" in results["resourcemanager"]["detail"]
    assert results["gpus"]["detail"] == results["queues"]["detail"] == "needs resourcemanager"
    assert results["namenode"]["outcome"] == results["hdfs-home"]["outcome"] == "OK"


def test_namenode_on_a_closed_port(cluster, tmp_path):
    conf = copy_conf(cluster, tmp_path)
    port = closed_port()
    set_property(conf / "core-site.xml", "fs.defaultFS", f"hdfs://127.0.0.1:{port}")
    results = expect_only(env_with(HADOOP_CONF_DIR=str(conf)), "namenode", "fs.defaultFS",
                          str(conf / "core-site.xml"))
    assert results["hdfs-home"]["outcome"] == "SKIP" and results["hdfs-home"]["detail"] == "needs namenode"
    assert results["resourcemanager"]["outcome"] == "OK"


def test_no_yarn_command(cluster, tmp_path):
    bin_dir = str(cluster.layout.bin_dir)
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p and p != bin_dir)
    empty = tmp_path / "no-cluster"  # the local fallback finds no `yarn` here either
    empty.mkdir()
    env = env_with(PATH=path, HADOOP_HOME=None, **{protocol.ENV_CLUSTER_DIR: str(empty)})
    results = expect_only(env, "yarn", "PATH")
    assert results["config"]["outcome"] == results["resourcemanager"]["outcome"] == "OK"


def test_kerberos_without_a_ticket(cluster, tmp_path):
    conf = copy_conf(cluster, tmp_path)
    set_property(conf / "core-site.xml", "hadoop.security.authentication", "kerberos")
    cache = tmp_path / "krb5cc_empty"
    cache.write_bytes(b"")
    env = env_with(HADOOP_CONF_DIR=str(conf), KRB5CCNAME=f"FILE:{cache}",
                   **{protocol.ENV_KEYTAB: None, protocol.ENV_PRINCIPAL: None})
    results = expect_only(env, "kerberos", "kinit", protocol.ENV_KEYTAB)
    assert "hadoop.security.authentication=kerberos" in results["kerberos"]["detail"]
