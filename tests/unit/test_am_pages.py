"""The AM's pages are reachable only from inside its container (skein's proxy), not on the node's address."""
from __future__ import annotations

import socket
import urllib.request

import pytest

from appmaster.am import master


def test_the_status_page_listens_on_loopback_not_on_the_nodes_address(monkeypatch):
    monkeypatch.setenv("NM_HOST", "127.0.0.2")  # a node address other than the loopback the page uses
    web = master.page_server()
    try:
        with urllib.request.urlopen(f"{web.url}/api/status", timeout=5) as resp:
            assert resp.status == 200
        assert web.host == "127.0.0.1"
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.2", web.port), timeout=2).close()
    finally:
        web.close()
