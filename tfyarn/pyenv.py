"""Ship the submitter's Python environment to nodes that do not have it.

``python_env: packed`` packs the active virtualenv (venv-pack) once per
distinct set of installed packages, uploads it to an HDFS cache keyed by
that fingerprint, and localizes it in every container (AM included) as a
YARN archive, so tfyarn itself need not be installed on the nodes. A second
submit with the same environment finds it in the cache and uploads nothing.
"""
from __future__ import annotations

import getpass
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata

from tfyarn.errors import SpecError

ARCHIVE_DIR = "pyenv"  # where YARN unpacks the archive in each container
PYTHON_IN_ARCHIVE = f"{ARCHIVE_DIR}/bin/python"


@dataclass(frozen=True)
class PackedEnv:
    uri: str  # hdfs:// location of the archive in the cache
    fingerprint: str


def _editable(dist: metadata.Distribution) -> bool:
    text = dist.read_text("direct_url.json")
    return bool(text) and bool(json.loads(text).get("dir_info", {}).get("editable"))


def fingerprint() -> str:
    """A hash of the interpreter and every installed distribution (name, version)."""
    if sys.prefix == sys.base_prefix:
        raise SpecError("python_env: packed needs a virtualenv; run tfyarn from one (python -m venv ...)")
    dists = sorted(f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions())
    editable = [d.metadata["Name"] for d in metadata.distributions() if _editable(d)]
    if editable:
        raise SpecError(f"python_env: packed cannot ship editable installs ({', '.join(sorted(editable))}); "
                        "install them normally (pip install .) or use --python-env local")
    text = "\n".join([sys.version, *dists])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def cache_uri(fp: str, user: str | None = None) -> str:
    return f"hdfs:///user/{user or getpass.getuser()}/.tfyarn/envs/{fp}.tar.gz"


def planned() -> PackedEnv:
    """Where the current environment is (or will be) cached; cheap, touches nothing."""
    fp = fingerprint()
    return PackedEnv(cache_uri(fp), fp)


def ensure_uploaded(env: PackedEnv, progress: Callable[[str], None]) -> int:
    """Pack and upload unless cached; return the bytes uploaded (0 when cached)."""
    from tfyarn.storage import locate, parse_uri, put_file  # pyarrow/hdfs-native only when shipping

    dest = locate(parse_uri(env.uri))
    if dest.exists():
        progress(f"Python environment {env.fingerprint} is cached at {env.uri}: uploaded 0 bytes.")
        return 0
    import venv_pack

    with tempfile.TemporaryDirectory(prefix="tfyarn-pyenv-") as tmp:
        archive = os.path.join(tmp, "env.tar.gz")
        progress(f"Packing the Python environment {sys.prefix} (once per set of packages) ...")
        venv_pack.pack(prefix=sys.prefix, output=archive, compress_level=1)
        size = os.path.getsize(archive)
        progress(f"Uploading {size / 2**20:.1f} MiB to {env.uri} ...")
        shown = [0]

        def tick(done: int, total: int) -> None:
            tenth = done * 10 // max(total, 1)
            if tenth > shown[0]:
                shown[0] = tenth
                progress(f"  {tenth * 10}% ({done / 2**20:.1f} of {total / 2**20:.1f} MiB)")

        put_file(locate(parse_uri(archive)), dest, progress=tick)
    progress(f"Python environment {env.fingerprint} uploaded: {size} bytes.")
    return size
