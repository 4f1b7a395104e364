"""A Kerberized two-node local cluster (`tfyarn cluster up --kerberos --nodes 2`) for this package's tests.

It uses the same loopback ports as the suite's plain cluster, so it runs on
its own: `make test-kerberos` stops the plain one first, and this session
stops the Kerberized one at its end. Users are the realm's alice and bob,
each with a ticket cache and a HOME of their own (their skein keys differ,
as two people's would).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.conftest import TFYARN, app_id_from
from tfyarn.cluster import ClusterLayout, ClusterOptions, LocalCluster, kdc
from tfyarn.cluster.layout import default_cluster_dir

ENV_DIR = "TFYARN_KERBEROS_CLUSTER_DIR"
# HDFS delegation tokens live this long here (not Hadoop's 7 days), so a job can outlive them
# (tests/kerberos/test_long_jobs.py). hdfs-native passes over a token in its last minute, so a
# job without renewal has TOKEN_LIFETIME_S - 60 s to open its last HDFS connection: every other
# job of the suite ends well within that.
TOKEN_LIFETIME_S = 240


@dataclass
class User:
    name: str
    env: dict[str, str]  # a shell of theirs: HADOOP_CONF_DIR, KRB5_CONFIG, their ticket cache and HOME
    keytab: Path

    def tfyarn(self, *args: str, timeout: float = 300, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*TFYARN, *args], capture_output=True, text=True, timeout=timeout,
                              env={**self.env, **extra})


def hdfs(cluster: LocalCluster, user: User, *args: str) -> str:
    """``hdfs dfs ARGS`` as ``user``: its stdout (it must succeed)."""
    res = subprocess.run([str(cluster.layout.bin_dir / "hdfs"), "dfs", *args], env=user.env, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.fixture(scope="session")
def kcluster() -> Iterator[LocalCluster]:
    root = Path(os.environ.get(ENV_DIR) or f"{default_cluster_dir()}-kerberos").expanduser().absolute()
    plain = LocalCluster()
    if plain.layout.root != root and not plain.status().stopped:
        pytest.fail(f"the plain cluster in {plain.layout.root} runs on the same ports: `tfyarn cluster down` it "
                    "first (`make test-kerberos` does)")
    c = LocalCluster(ClusterLayout(root=root), ClusterOptions(nodes=2, kerberos=True, token_lifetime_s=TOKEN_LIFETIME_S))
    c.up(progress=lambda m: print(m, file=sys.stderr))
    for k, v in (line.removeprefix("export ").split("=", 1) for line in c.env_lines()):
        os.environ[k] = v.strip("'").replace('"$PATH"', os.environ["PATH"])
    yield c
    c.down(progress=lambda m: print(m, file=sys.stderr))


def _user(cluster: LocalCluster, name: str, base: Path, ticket: bool = True) -> User:
    home = base / name
    home.mkdir(parents=True, exist_ok=True)
    ccache = home / "krb5cc"
    if ticket:
        kdc.login(cluster.layout, kdc.user_principal(name), ccache)
    # Their own skein credentials (in their HOME): a SKEIN_CONFIG inherited from a shell that used the
    # plain cluster would give both the same key, and so each other's jobs' channels.
    env = {**{k: v for k, v in os.environ.items() if k != "SKEIN_CONFIG"}, "HOME": str(home),
           "KRB5CCNAME": f"FILE:{ccache}"}
    return User(name, env, kdc.keytab(cluster.layout, kdc.user_principal(name)))


@pytest.fixture(scope="session")
def alice(kcluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> User:
    return _user(kcluster, "alice", tmp_path_factory.mktemp("users"))


@pytest.fixture(scope="session")
def bob(kcluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> User:
    return _user(kcluster, "bob", tmp_path_factory.mktemp("users"))


@pytest.fixture
def nobody(kcluster: LocalCluster, tmp_path: Path) -> User:
    """A shell with the cluster's config and no Kerberos ticket."""
    return _user(kcluster, "alice", tmp_path, ticket=False)


@dataclass
class LongJobs:
    """Two jobs that outlive their delegation tokens, started as the session starts (they take minutes)."""

    renewed: str  # submitted with --principal/--keytab: its AM renews the HDFS token
    ticket: str  # submitted from alice's ticket cache alone: nothing renews it
    data: str  # their --input on HDFS
    submitted: float
    dry_run: str  # `submit --dry-run` of the renewed one, as printed


LONG_SLEEP_S = TOKEN_LIFETIME_S + 25
SAVE_EVERY_S = 125  # snapshots at ~125 s (the first token still good) and ~250 s (past its max lifetime)


@pytest.fixture(scope="session", autouse=True)
def long_jobs(kcluster: LocalCluster, alice: User, tmp_path_factory: pytest.TempPathFactory) -> LongJobs:
    """Submitted first, so their minutes overlap the other tests; tests/kerberos/test_long_jobs.py follows them."""
    run = uuid.uuid4().hex[:8]
    base = tmp_path_factory.mktemp("long")
    (base / "data").mkdir()
    (base / "data" / "x.txt").write_text(f"input {run}\n")
    data = f"/user/alice/long-{run}"
    put = subprocess.run([str(kcluster.layout.bin_dir / "hdfs"), "dfs", "-put", str(base / "data"), data],
                         env=alice.env, capture_output=True, text=True, timeout=120)
    assert put.returncode == 0, put.stderr
    script = f'mkdir -p out && cp "$TFYARN_INPUT/x.txt" out/ && sleep {LONG_SLEEP_S} && date +%s > out/done.txt'

    def args(name: str, *extra: str) -> list[str]:
        return ["submit", "--name", name, "--num-workers", "1", "--input", f"hdfs://{data}", *extra,
                "--output", f"./out:hdfs://{data}/{name}", "--save-every", str(SAVE_EVERY_S), "--", "bash", "-c", script]

    no_ticket = {"KRB5CCNAME": f"FILE:{base / 'no-ccache'}"}
    keytab = ["--principal", "alice", "--keytab", str(alice.keytab)]
    dry = alice.tfyarn(*keytab, *args("renewed", "--dry-run=yarn"), **no_ticket)
    assert dry.returncode == 0, dry.stderr
    submitted = time.time()
    renewed = alice.tfyarn(*keytab, *args("renewed"), **no_ticket)
    ticket = alice.tfyarn(*args("ticket"))
    assert renewed.returncode == 0 and ticket.returncode == 0, renewed.stderr + ticket.stderr
    return LongJobs(app_id_from(renewed.stdout), app_id_from(ticket.stdout), data, submitted, dry.stdout)
