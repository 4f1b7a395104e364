"""Hadoop's REST endpoints (NameNode JMX, WebHDFS, RM and NM web services), read with the stdlib.

``None`` means "did not answer (yet)": callers poll daemons that are starting,
so an unreachable endpoint is an expected state, not an error.
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


def fetch(url: str, method: str = "GET", timeout: float = 5.0) -> bytes | None:
    req = urllib.request.Request(url, method=method, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.read()
    except (urllib.error.URLError, OSError):
        return None


def fetch_json(url: str, method: str = "GET", timeout: float = 5.0) -> Any:
    raw = fetch(url, method, timeout)
    if raw is None:
        return None
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return None
