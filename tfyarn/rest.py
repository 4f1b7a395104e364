"""Hadoop's REST endpoints (NameNode JMX, WebHDFS, RM and NM web services), read with the stdlib.

``fetch``'s ``None`` means "did not answer (yet)": callers poll daemons that
are starting, so an unreachable endpoint is an expected state, not an error.
``get`` says why instead, for callers that must tell the user (a check that
could not run); ``parse_json`` likewise says why an answer cannot be read.
On a Kerberized cluster an endpoint answers 401 ``Negotiate``; the request
is then made again with a SPNEGO token from the user's ticket cache.
HTTPS endpoints are verified against the system's CAs plus the PEM file
named by ``$TFYARN_CA_FILE`` (a private cluster CA, as the local cluster's).
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request
from functools import cache
from typing import Any

from tfyarn import protocol, spnego


class FetchError(Exception):
    """An endpoint gave no usable answer; the message says why in a few words."""


class Unreadable(Exception):
    """An answer is not in a form tfyarn understands; the message says how."""


def parse_json(raw: bytes) -> Any:
    """``raw`` as JSON, or Unreadable saying why not."""
    try:
        return json.loads(raw)
    except ValueError as e:
        raise Unreadable(f"not JSON ({e})") from None


def get(url: str, method: str = "GET", timeout: float = 5.0, body: Any = None) -> bytes:
    """The body of ``url``; FetchError (HTTP status, refused, timed out, not HTTP) otherwise.

    ``body``, if given, is sent as JSON.
    """
    headers = {"Accept": "application/json"}
    data = None
    if body is not None:
        data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        try:
            return _open(req, timeout)
        except urllib.error.HTTPError as e:
            if e.code != 401 or "negotiate" not in (e.headers.get("WWW-Authenticate") or "").lower():
                raise
            try:
                neg = spnego.token(urllib.parse.urlsplit(url).hostname or "")
            except spnego.SpnegoError as why:
                raise FetchError(f"HTTP 401: Kerberos authentication needed ({why}); run kinit") from None
            req.add_header("Authorization", f"Negotiate {neg}")
            return _open(req, timeout)
    except urllib.error.HTTPError as e:  # before URLError: it is one
        raise FetchError(f"HTTP {e.code} {e.reason}") from None
    except urllib.error.URLError as e:
        raise FetchError(str(e.reason)) from None
    except (OSError, http.client.HTTPException, ValueError) as e:  # timeouts, garbage instead of HTTP, bad URL
        raise FetchError(f"{type(e).__name__}: {e}" if str(e) else type(e).__name__) from None


def _open(req: urllib.request.Request, timeout: float) -> bytes:
    ctx = _tls_context(os.environ.get(protocol.ENV_CA_FILE) or "") if req.full_url.startswith("https:") else None
    with urllib.request.urlopen(req, timeout=timeout, context=ctx) as resp:
        return resp.read()


@cache
def _tls_context(ca_file: str) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    if ca_file:
        ctx.load_verify_locations(cafile=ca_file)
    return ctx


def fetch(url: str, method: str = "GET", timeout: float = 5.0) -> bytes | None:
    try:
        return get(url, method, timeout)
    except FetchError:
        return None


def fetch_json(url: str, method: str = "GET", timeout: float = 5.0) -> Any:
    raw = fetch(url, method, timeout)
    if raw is None:
        return None
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return None
