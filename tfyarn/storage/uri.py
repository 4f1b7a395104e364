"""Storage URIs: ``hdfs:///data``, ``hdfs://nn:8020/data``, ``viewfs://cluster/data``, ``file:///x``, ``./x``."""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from urllib.parse import urlparse

from tfyarn.errors import SpecError

REMOTE_SCHEMES = ("hdfs", "viewfs")
SCHEMES = (*REMOTE_SCHEMES, "file")
# host (a name, or an [IPv6] address), then an optional :port checked apart, for a message that names it
_AUTHORITY_RE = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]*)(?::([^:]*))?")


@dataclass(frozen=True)
class StorageUri:
    scheme: str  # hdfs | viewfs | file
    authority: str  # "" = the cluster's default (fs.defaultFS) or the local machine
    path: str  # absolute, normalised

    @property
    def remote(self) -> bool:
        return self.scheme in REMOTE_SCHEMES

    def __str__(self) -> str:
        return f"{self.scheme}://{self.authority}{self.path}"

    def child(self, relative: str) -> StorageUri:
        return StorageUri(self.scheme, self.authority, posixpath.join(self.path, relative))


def _check_authority(netloc: str, text: str, what: str) -> None:
    """HOST[:PORT] (or a viewfs mount table name), the port 1-65535: what Hadoop's URIs accept."""
    m = _AUTHORITY_RE.fullmatch(netloc)
    if not m:
        raise SpecError(f"{what}: {text!r} has a malformed host; write SCHEME://HOST[:PORT]/path")
    port = m.group(2)
    if port is not None and not (re.fullmatch(r"[0-9]{1,5}", port) and 0 < int(port) < 65536):
        raise SpecError(f"{what}: {text!r} has port {port!r}; a port is a number from 1 to 65535")
    if port is not None and not m.group(1):
        raise SpecError(f"{what}: {text!r} has a port but no host")


def parse_uri(text: str, what: str = "path") -> StorageUri:
    """Parse and check; SpecError naming ``what`` when malformed. Plain paths are local."""
    if not isinstance(text, str) or not text.strip():
        raise SpecError(f"{what}: empty path")
    if "://" not in text:
        if ":" in text.split("/")[0]:
            raise SpecError(f"{what}: {text!r} is not a URI; write hdfs:///path, viewfs://cluster/path or a local path")
        return StorageUri("file", "", os.path.abspath(os.path.expanduser(text)))
    try:
        u = urlparse(text)
    except ValueError:  # e.g. an unclosed [ of an IPv6 host
        raise SpecError(f"{what}: {text!r} has a malformed host; write SCHEME://HOST[:PORT]/path") from None
    if u.scheme not in SCHEMES:
        raise SpecError(
            f"{what}: {text!r} has scheme {u.scheme!r}; tfyarn reads and writes {', '.join(s + '://' for s in SCHEMES)}"
        )
    if not u.path.startswith("/"):
        raise SpecError(f"{what}: {text!r} needs an absolute path, e.g. {u.scheme}:///data/train")
    if u.scheme == "file" and u.netloc:
        raise SpecError(f"{what}: {text!r}: file URIs have no host; write file:///path")
    _check_authority(u.netloc, text, what)
    if "?" in text or "#" in text:
        raise SpecError(f"{what}: {text!r} has a query or fragment (? or #), which Hadoop paths cannot hold")
    if ".." in u.path.split("/"):  # normalising would silently read or write elsewhere
        raise SpecError(f"{what}: {text!r} has a '..' segment; write the path without it")
    path = posixpath.normpath(u.path)
    return StorageUri(u.scheme, u.netloc, "/" if path == "//" else path)
