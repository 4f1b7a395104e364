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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.conftest import TFYARN
from tfyarn.cluster import ClusterLayout, ClusterOptions, LocalCluster, kdc
from tfyarn.cluster.layout import default_cluster_dir

ENV_DIR = "TFYARN_KERBEROS_CLUSTER_DIR"


@dataclass
class User:
    name: str
    env: dict[str, str]  # a shell of theirs: HADOOP_CONF_DIR, KRB5_CONFIG, their ticket cache and HOME
    keytab: Path

    def tfyarn(self, *args: str, timeout: float = 300, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*TFYARN, *args], capture_output=True, text=True, timeout=timeout,
                              env={**self.env, **extra})


@pytest.fixture(scope="session")
def kcluster() -> Iterator[LocalCluster]:
    root = Path(os.environ.get(ENV_DIR) or f"{default_cluster_dir()}-kerberos").expanduser().absolute()
    plain = LocalCluster()
    if plain.layout.root != root and not plain.status().stopped:
        pytest.fail(f"the plain cluster in {plain.layout.root} runs on the same ports: `tfyarn cluster down` it "
                    "first (`make test-kerberos` does)")
    c = LocalCluster(ClusterLayout(root=root), ClusterOptions(nodes=2, kerberos=True))
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
    env = {**os.environ, "HOME": str(home), "KRB5CCNAME": f"FILE:{ccache}"}
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
