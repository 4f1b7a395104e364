"""A skein global driver started for the cluster serves tfyarn's commands: no Java driver of their own."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import TFYARN
from tfyarn.client import driver_log

SKEIN = [str(Path(sys.executable).parent / "skein")]


@pytest.fixture
def global_driver(cluster, tmp_path):
    """`skein driver start` as a user runs it after `eval "$(tfyarn cluster env)"`, in a skein config dir of its own."""
    env = {**os.environ, "SKEIN_CONFIG": str(tmp_path / "skein")}
    started = subprocess.run([*SKEIN, "driver", "start"], env=env, capture_output=True, text=True, timeout=120)
    assert started.returncode == 0, started.stderr
    yield env
    stopped = subprocess.run([*SKEIN, "driver", "stop"], env=env, capture_output=True, text=True, timeout=60)
    assert stopped.returncode == 0, stopped.stderr


def own_driver_started(env: dict[str, str], home: Path, *args: str) -> bool:
    """Run a tfyarn command with its own HOME; whether it started a Java driver of its own (which logs there)."""
    home.mkdir(parents=True, exist_ok=True)
    log = home / driver_log().relative_to(Path.home())
    res = subprocess.run([*TFYARN, *args], env={**env, "HOME": str(home)}, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    return log.exists()


def test_commands_use_the_global_driver_for_this_cluster(global_driver, tmp_path):
    assert not own_driver_started(global_driver, tmp_path / "a", "list")
    assert own_driver_started({**global_driver, "TFYARN_OWN_DRIVER": "1"}, tmp_path / "b", "list")


def test_a_global_driver_for_another_config_is_left_alone(global_driver, tmp_path):
    other = tmp_path / "conf-copy"  # the same cluster under another config dir: tfyarn cannot know that
    subprocess.run(["cp", "-r", os.environ["HADOOP_CONF_DIR"], str(other)], check=True)
    assert own_driver_started({**global_driver, "HADOOP_CONF_DIR": str(other)}, tmp_path / "home", "list")
