"""A skein global driver is reused only when it serves the very cluster the command talks to."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tfyarn import protocol, skeindriver


@pytest.fixture
def driver(tmp_path, monkeypatch):
    """A stand-in driver process whose environment names a conf dir, recorded as skein records one."""
    conf = tmp_path / "conf"
    conf.mkdir()
    monkeypatch.delenv(protocol.ENV_HADOOP_USER_NAME, raising=False)
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                            env={**os.environ, protocol.ENV_HADOOP_CONF_DIR: str(conf)})
    record = tmp_path / "driver"
    record.write_text(json.dumps({"address": "127.0.0.1:1", "pid": proc.pid}))
    monkeypatch.setattr(skeindriver, "driver_file", lambda: record)
    for name in (skeindriver.ENV_OWN_DRIVER, protocol.ENV_PRINCIPAL, protocol.ENV_KEYTAB):
        monkeypatch.delenv(name, raising=False)
    yield conf, record, proc
    proc.kill()
    proc.wait()


def test_a_driver_for_this_cluster_is_taken(driver) -> None:
    conf, _, _ = driver
    assert skeindriver.why_not(conf) is None


def test_a_driver_for_another_cluster_is_not(driver, tmp_path) -> None:
    conf, _, _ = driver
    other = tmp_path / "other"
    other.mkdir()
    assert skeindriver.why_not(other) == f"the global driver serves HADOOP_CONF_DIR={conf}, not {other}"


def test_own_credentials_or_the_opt_out_start_a_driver_of_our_own(driver, monkeypatch) -> None:
    conf, _, _ = driver
    monkeypatch.setenv(protocol.ENV_PRINCIPAL, "alice@EXAMPLE.COM")
    assert "its own --principal/--keytab" in (skeindriver.why_not(conf) or "")
    monkeypatch.delenv(protocol.ENV_PRINCIPAL)
    monkeypatch.setenv(skeindriver.ENV_OWN_DRIVER, "1")
    assert skeindriver.why_not(conf) == "TFYARN_OWN_DRIVER is set"


def test_a_command_acting_as_another_simple_auth_user_starts_its_own(driver, monkeypatch) -> None:
    conf, _, _ = driver  # the driver acts as the user who started it: never submit as them for bob
    monkeypatch.setenv(protocol.ENV_HADOOP_USER_NAME, "bob")
    assert skeindriver.why_not(conf) == "this command acts as HADOOP_USER_NAME=bob, the global driver as (unset)"


def test_a_dead_or_unrecorded_driver_is_not_taken(driver) -> None:
    conf, record, proc = driver
    proc.kill()
    proc.wait()
    assert skeindriver.why_not(conf) == f"the global driver's process {proc.pid} is gone or not yours"
    record.write_text("not json")
    assert skeindriver.why_not(conf) == "no global driver is recorded (`skein driver start` starts one)"


def test_a_driver_that_does_not_answer_gives_none(driver) -> None:
    conf, _, _ = driver  # recorded at 127.0.0.1:1, where nothing listens
    assert skeindriver.connect(conf) is None


def test_environ_of_reads_a_process_environment() -> None:
    env = skeindriver.environ_of(os.getpid())
    assert env is not None and "PATH" in env  # the environment this process started with
    assert skeindriver.environ_of(2**22 + 1) is None  # above any pid_max: no such process
