"""Hadoop delegation tokens as bytes: the credentials file YARN hands a container, and WebHDFS's token string.

A long job outlives the HDFS delegation tokens it was submitted with (the
NameNode's ``dfs.namenode.delegation.token.max-lifetime``, 7 days by
default). The ApplicationMaster then fetches new ones (appmaster.am.renewal)
and every container swaps them into its ``HADOOP_TOKEN_FILE_LOCATION``
file. That needs the file's two formats (Hadoop's Writable one, version 0,
and its protobuf one, version 1) and the token identifier's dates; Hadoop's
own classes are Java, and hdfs-native only reads the file. Pure functions,
no I/O.
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass, replace

MAGIC = b"HDTS"
HDFS_KIND = "HDFS_DELEGATION_TOKEN"
_WEBHDFS_KINDS = ("WEBHDFS delegation", "SWEBHDFS delegation")


class TokenFormatError(ValueError):
    """Bytes that are not a Hadoop credentials file or token; the message says where they stop making sense."""


@dataclass(frozen=True)
class Token:
    identifier: bytes
    password: bytes
    kind: str
    service: str

    def __repr__(self) -> str:  # never print the password, even in a traceback
        return f"Token(kind={self.kind!r}, service={self.service!r})"


@dataclass(frozen=True)
class Credentials:
    """A credentials file's tokens and secret keys, each under its alias, in file order."""

    tokens: tuple[tuple[str, Token], ...] = ()
    secrets: tuple[tuple[str, bytes], ...] = ()

    def hdfs_tokens(self) -> list[tuple[str, Token]]:
        return [(alias, t) for alias, t in self.tokens if t.kind == HDFS_KIND]

    def with_token(self, alias: str, token: Token) -> Credentials:
        """These credentials with ``token`` under ``alias`` (replacing what was there)."""
        kept = tuple((a, t) for a, t in self.tokens if a != alias)
        return replace(self, tokens=(*kept, (alias, token)))


@dataclass(frozen=True)
class TokenDates:
    """What an HDFS delegation token's identifier says about it (epoch milliseconds)."""

    owner: str
    renewer: str
    issue_ms: int
    max_ms: int  # no renewal keeps it valid past this


# --- Hadoop's WritableUtils encodings -------------------------------------------------------------


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise TokenFormatError(f"truncated at byte {self.pos} (wanted {n} more)")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def vlong(self) -> int:
        first = struct.unpack("b", self.take(1))[0]
        if first >= -112:
            return first
        negative = first < -120
        size = (-119 - first) if negative else (-111 - first)
        value = int.from_bytes(self.take(size - 1), "big")
        return ~value if negative else value

    def text(self) -> str:
        return self.take(self.vlong()).decode()

    def blob(self) -> bytes:
        return self.take(self.vlong())

    def varint(self) -> int:  # protobuf's unsigned varint
        shift = value = 0
        while True:
            b = self.take(1)[0]
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7


def _vlong(value: int) -> bytes:
    if -112 <= value <= 127:
        return struct.pack("b", value)
    length = -112
    if value < 0:
        value, length = ~value, -120
    body = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return struct.pack("b", length - len(body)) + body


def _text(s: str) -> bytes:
    raw = s.encode()
    return _vlong(len(raw)) + raw


def _blob(b: bytes) -> bytes:
    return _vlong(len(b)) + b


def _read_token(r: _Reader) -> Token:
    identifier, password = r.blob(), r.blob()
    return Token(identifier, password, r.text(), r.text())


def _write_token(t: Token) -> bytes:
    return _blob(t.identifier) + _blob(t.password) + _text(t.kind) + _text(t.service)


# --- protobuf (version 1): CredentialsProto { repeated CredentialsKVProto tokens = 1, secrets = 2 } ----------


def _fields(data: bytes) -> list[tuple[int, bytes | int]]:
    r, out = _Reader(data), list[tuple[int, bytes | int]]()
    while r.pos < len(data):
        key = r.varint()
        number, wire = key >> 3, key & 7
        if wire == 2:
            out.append((number, r.take(r.varint())))
        elif wire == 0:
            out.append((number, r.varint()))
        else:
            raise TokenFormatError(f"unexpected protobuf wire type {wire} at byte {r.pos}")
    return out


def _kv(data: bytes) -> tuple[str, Token | None, bytes]:
    alias, token, secret = "", None, b""
    for number, value in _fields(data):
        if number == 1 and isinstance(value, bytes):
            alias = value.decode()
        elif number == 2 and isinstance(value, bytes):
            parts = {n: v for n, v in _fields(value) if isinstance(v, bytes)}
            token = Token(parts.get(1, b""), parts.get(2, b""), parts.get(3, b"").decode(), parts.get(4, b"").decode())
        elif number == 3 and isinstance(value, bytes):
            secret = value
    return alias, token, secret


def parse(data: bytes) -> Credentials:
    """A credentials file (``Credentials.writeTokenStorageFile``), either version."""
    if data[:4] != MAGIC or len(data) < 5:
        raise TokenFormatError("not a Hadoop credentials file (no HDTS header)")
    version, r = data[4], _Reader(data[5:])
    if version == 0:
        tokens = tuple((r.text(), _read_token(r)) for _ in range(r.vlong()))
        secrets = tuple((r.text(), r.blob()) for _ in range(r.vlong()))
        return Credentials(tokens, secrets)
    if version == 1:
        body = r.take(r.varint())
        toks, secs = [], []
        for number, value in _fields(body):
            if not isinstance(value, bytes):
                continue
            alias, token, secret = _kv(value)
            if number == 1 and token is not None:
                toks.append((alias, token))
            elif number == 2:
                secs.append((alias, secret))
        return Credentials(tuple(toks), tuple(secs))
    raise TokenFormatError(f"credentials file version {version} is not one tfyarn reads (0 or 1)")


def serialize(creds: Credentials) -> bytes:
    """Version 0 (Writable), which every Hadoop release and hdfs-native read."""
    out = [MAGIC, b"\x00", _vlong(len(creds.tokens))]
    out += [_text(alias) + _write_token(t) for alias, t in creds.tokens]
    out.append(_vlong(len(creds.secrets)))
    out += [_text(alias) + _blob(s) for alias, s in creds.secrets]
    return b"".join(out)


def from_url_string(url_string: str, service: str | None = None) -> Token:
    """WebHDFS's GETDELEGATIONTOKEN answer (``Token.urlString``) as an RPC token (for ``service``, if given).

    The NameNode issues one token whatever the protocol; WebHDFS only labels
    it with its own kind, so it is relabelled for RPC clients.
    """
    padded = url_string + "=" * (-len(url_string) % 4)
    try:
        raw = base64.urlsafe_b64decode(padded)
    except ValueError as e:
        raise TokenFormatError(f"not a token string ({e})") from None
    r = _Reader(raw)
    token = _read_token(r)
    kind = HDFS_KIND if token.kind in _WEBHDFS_KINDS else token.kind
    return Token(token.identifier, token.password, kind, token.service if service is None else service)


def to_url_string(token: Token, kind: str = "") -> str:
    """The token as WebHDFS takes it back (RENEWDELEGATIONTOKEN's ``token=``)."""
    body = _write_token(replace(token, kind=kind or token.kind))
    return base64.urlsafe_b64encode(body).decode().rstrip("=")


def dates(token: Token) -> TokenDates:
    """An HDFS delegation token's owner, renewer and dates (AbstractDelegationTokenIdentifier, version 0)."""
    r = _Reader(token.identifier)
    if r.take(1) != b"\x00":
        raise TokenFormatError("unknown delegation token identifier version")
    owner, renewer, _real = r.text(), r.text(), r.text()
    return TokenDates(owner, renewer, r.vlong(), r.vlong())
