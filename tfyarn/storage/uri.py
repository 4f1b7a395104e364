"""Storage URIs: ``hdfs:///data``, ``hdfs://nn:8020/data``, ``viewfs://cluster/data``, ``file:///x``, ``./x``."""
from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from urllib.parse import urlparse

from tfyarn.errors import SpecError

REMOTE_SCHEMES = ("hdfs", "viewfs")
SCHEMES = (*REMOTE_SCHEMES, "file")


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


def parse_uri(text: str, what: str = "path") -> StorageUri:
    """Parse and check; SpecError naming ``what`` when malformed. Plain paths are local."""
    if not isinstance(text, str) or not text.strip():
        raise SpecError(f"{what}: empty path")
    if "://" not in text:
        if ":" in text.split("/")[0]:
            raise SpecError(f"{what}: {text!r} is not a URI; write hdfs:///path, viewfs://cluster/path "
                            "or a local path")
        return StorageUri("file", "", os.path.abspath(os.path.expanduser(text)))
    u = urlparse(text)
    if u.scheme not in SCHEMES:
        raise SpecError(f"{what}: {text!r} has scheme {u.scheme!r}; tfyarn reads and writes "
                        f"{', '.join(s + '://' for s in SCHEMES)}")
    if not u.path.startswith("/"):
        raise SpecError(f"{what}: {text!r} needs an absolute path, e.g. {u.scheme}:///data/train")
    if u.scheme == "file" and u.netloc:
        raise SpecError(f"{what}: {text!r}: file URIs have no host; write file:///path")
    if u.port is not None and not u.hostname:
        raise SpecError(f"{what}: {text!r} has a port but no host")
    path = posixpath.normpath(u.path)
    return StorageUri(u.scheme, u.netloc, "/" if path == "//" else path)
