"""Generated shell text treats every path as data: spaces, `$(...)`, backticks, quotes, newlines.

The scripts are generated for a cluster dir, jar cache and JAVA_HOME whose
names would run ``touch PWNED`` if any were pasted into the shell text
unquoted, then run in ways that need no Hadoop: ``bash -n``, the bare
``classpath`` subcommand, and a stand-in ``java`` that records its argv.
"""
from __future__ import annotations

import os
import subprocess

import pytest

from tfyarn.cluster.layout import ClusterLayout
from tfyarn.cluster.local import LocalCluster
from tfyarn.cluster.scripts import COMMANDS, write_scripts

# One dir level each: a space, command substitution twice, a single and a double quote, a newline.
NASTY = "a b/$(touch PWNED)/`touch PWNED`/it's \"q\"/nl\ntouch PWNED\n"
FAKE_JAVA = '#!/bin/sh\nprintf \'%s\\0\' "$@" > "$ARGS_OUT"\n'


@pytest.fixture
def nasty(tmp_path, monkeypatch):
    """A layout and JAVA_HOME under nasty dir names; the cwd where PWNED would appear."""
    java_home = tmp_path / "jdk" / NASTY
    (java_home / "bin").mkdir(parents=True)
    (java_home / "bin" / "java").write_text(FAKE_JAVA)
    (java_home / "bin" / "java").chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(java_home))
    layout = ClusterLayout(root=tmp_path / "cluster" / NASTY, jar_cache=tmp_path / "jars" / NASTY)
    work = tmp_path / "work"
    work.mkdir()
    return layout, java_home, work


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "HADOOP_CONF_DIR", "TFYARN_CLIENT_OPTS")}
    return {**env, **extra}


def test_generated_scripts_parse_and_quote_every_path(nasty):
    layout, java_home, work = nasty
    scripts = write_scripts(layout)
    assert sorted(p.name for p in scripts) == sorted(COMMANDS)
    for script in scripts:
        assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
        out = subprocess.run([str(script), "classpath"], cwd=work, env=clean_env(),
                             capture_output=True, text=True, check=True)
        assert out.stdout == f"{layout.conf_dir}:{layout.lib_dir}/*\n"
        assert list(work.iterdir()) == []  # no PWNED


def test_the_java_command_gets_each_path_as_one_argument(nasty, tmp_path):
    layout, java_home, work = nasty
    write_scripts(layout)
    args_out = tmp_path / "argv"
    subprocess.run([str(layout.bin_dir / "yarn"), "version"], cwd=work, env=clean_env(ARGS_OUT=str(args_out)),
                   check=True)
    argv = args_out.read_bytes().decode().split("\0")[:-1]
    i = argv.index("-cp")
    assert argv[i + 1:] == [f"{layout.conf_dir}:{layout.lib_dir}/*", "org.apache.hadoop.util.VersionInfo"]
    assert list(work.iterdir()) == []


def test_cluster_env_lines_survive_eval(nasty):
    layout, java_home, work = nasty
    lines = "\n".join(LocalCluster(layout).env_lines())
    show = 'eval "$LINES"; printf "%s\\0" "$JAVA_HOME" "$HADOOP_CONF_DIR" "${PATH%%:*}"'
    out = subprocess.run(["bash", "-c", show], cwd=work, env=clean_env(LINES=lines),
                         capture_output=True, check=True).stdout.decode().split("\0")[:-1]
    assert out == [str(java_home), str(layout.conf_dir), str(layout.bin_dir)]
    assert list(work.iterdir()) == []
