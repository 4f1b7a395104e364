"""The suite's multi-node helpers: the RM's node list, node addresses, and the `two_nodes` fixture.

Node 1 is the NodeManager on 127.0.0.1 (the RM names it ``localhost``);
node 2 is its own host on 127.0.0.2 with its own dirs, GPUs and /tmp.
"""
from __future__ import annotations

import json
import socket
import urllib.request
from typing import Any

import pytest

from tests.integration.conftest import tfyarn

NODE2 = "127.0.0.2"


def ip(name: str) -> str:
    """Node 1 registers as ``localhost`` (127.0.0.1's name); node 2's address has no name."""
    return socket.gethostbyname(name)


def rm_nodes() -> list[dict[str, Any]]:
    """The RM's own answer for its nodes (every state)."""
    with urllib.request.urlopen("http://127.0.0.1:8088/ws/v1/cluster/nodes", timeout=5) as r:
        return (json.load(r)["nodes"] or {}).get("node") or []


def running_nodes() -> dict[str, dict[str, Any]]:
    """address -> the RM's record, for its RUNNING nodes."""
    return {ip(n["nodeHostName"]): n for n in rm_nodes() if n["state"] == "RUNNING"}


def gpus_of(node: dict[str, Any]) -> int:
    infos = node["totalResource"]["resourceInformations"]["resourceInformation"]
    return int({i["name"]: i["value"] for i in infos}["yarn.io/gpu"])


def ensure_nodes(n: int) -> None:
    res = tfyarn("cluster", "up", "--nodes", str(n))
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.fixture(scope="session")
def two_nodes(cluster):
    """The suite's cluster with two RUNNING nodes (`up` is declarative: a no-op when it has them).

    Tests that take a node away (marked disruptive, so they run late) bring it back themselves.
    """
    if len(running_nodes()) != 2:
        ensure_nodes(2)
    return cluster
