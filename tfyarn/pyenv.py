"""Ship the submitter's Python environment and code to nodes that do not have them.

``python_env: packed`` packs the active virtualenv (venv-pack) or conda env (conda-pack) once per
distinct set of installed packages, uploads it to an HDFS cache keyed by
that fingerprint, and localizes it in every container (AM included) as a
YARN archive, so tfyarn itself need not be installed on the nodes. A second
submit with the same environment finds it in the cache and uploads nothing.
A given archive (venv-pack/conda-pack output) and the --code dir are cached
the same way, keyed by their content. What a code dir ships, and what it
never does, is tfyarn.codedir's rule. The caches are private: a 0700 local dir
(tfyarn.codedir) and 0700 dirs on HDFS, archive files 0600.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from tfyarn import codedir, protocol
from tfyarn.errors import SpecError

ARCHIVE_DIR = protocol.PYENV_DIR
PYTHON_IN_ARCHIVE = f"{ARCHIVE_DIR}/bin/python"
CODE_DIR = protocol.CODE_DIR
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip")
MAX_CODE_BYTES = 200 * 2**20
CONDA_META = "conda-meta"  # the dir that makes a prefix a conda environment


@dataclass(frozen=True)
class PackedEnv:
    uri: str  # hdfs:// location of the archive in the cache
    fingerprint: str
    local: str = ""  # a given archive, or where the code dir's archive is (or will be) written
    code: codedir.CodeDir | None = None  # the code dir's files, for writing its archive

    @property
    def summary(self) -> str:
        """What a code archive holds, in one line ("" for an environment)."""
        return self.code.summary() if self.code else ""


def _editable(dist: metadata.Distribution) -> bool:
    text = dist.read_text("direct_url.json")
    return bool(text) and bool(json.loads(text or "{}").get("dir_info", {}).get("editable"))


def _site_dirs() -> list[str]:
    paths = sysconfig.get_paths()
    return sorted({paths["purelib"], paths["platlib"]})


def fingerprint() -> str:
    """A hash of the interpreter and every installed distribution's files.

    Each distribution's RECORD lists a hash of every file it installed, so two
    environments differ in fingerprint exactly when an installed file does,
    e.g. a locally built package whose version string did not change.
    """
    conda = is_conda(sys.prefix)
    if sys.prefix == sys.base_prefix and not conda:
        raise SpecError(
            f"python_env: packed needs a virtualenv or a conda env, and {sys.prefix} is neither; "
            "run tfyarn from one (python -m venv ...)"
        )
    installed = list(metadata.distributions(path=_site_dirs()))  # not sys.path: it holds the cwd
    editable = [d.metadata["Name"] for d in installed if _editable(d)]  # before hashing: python_env auto asks
    if editable:
        raise SpecError(
            f"python_env: packed cannot ship editable installs ({', '.join(sorted(editable))}); "
            "install them normally (pip install .) or use --python-env local"
        )
    dists = sorted(f"{d.metadata['Name']}=={d.version}\n{d.read_text('RECORD') or ''}" for d in installed)
    if conda:  # conda's own packages (no RECORD): each has a conda-meta record named after its build
        dists += sorted(p.name for p in Path(sys.prefix, CONDA_META).glob("*.json"))
    text = "\n".join([sys.version, *dists])
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def is_conda(prefix: str) -> bool:
    """Whether ``prefix`` is a conda environment (shipped with conda-pack, not venv-pack)."""
    return os.path.isdir(os.path.join(prefix, CONDA_META))


def cache_uri(fp: str, user: str | None = None, kind: str = "envs", suffix: str = ".tar.gz") -> str:
    from tfyarn.credentials import user_name  # the principal's name on a Kerberized cluster

    return f"hdfs:///user/{user or user_name()}/.tfyarn/{kind}/{fp}{suffix}"


def _file_hash(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()[:20]


def planned(python_env: str = "packed") -> PackedEnv:
    """Where the environment is (or will be) cached; reads local files, touches no cluster.

    ``packed``: the active virtualenv, keyed by its packages. A path to a
    .tar.gz/.tgz/.zip: that archive (venv-pack or conda-pack output), keyed by its content.
    """
    if python_env == "packed":
        fp = fingerprint()
        return PackedEnv(cache_uri(fp), fp)
    if not os.path.isfile(python_env):
        raise SpecError(f"python_env: {python_env!r} is not a file")
    fp = _file_hash(python_env)
    suffix = next(s for s in ARCHIVE_SUFFIXES if python_env.endswith(s))
    return PackedEnv(cache_uri(fp, suffix=suffix), fp, local=os.path.abspath(python_env))


def shipped_code_dir(code: str, python_env: str) -> str:
    """The dir shipped as code: --code, else the cwd when the environment is shipped, else none ("").

    The home dir is never shipped implicitly: it holds every credential the user has.
    """
    if code or python_env == "local":
        return code
    cwd = os.getcwd()
    here, home = os.path.realpath(cwd), os.path.realpath(os.path.expanduser("~"))
    if home == here or home.startswith(here.rstrip(os.sep) + os.sep):  # home, or a dir above it such as /
        what = "your home dir" if home == here else f"a dir that holds your home dir {home}"
        raise SpecError(
            f"python_env: a shipped Python environment also ships the current dir, and that is "
            f"{what} ({cwd}); cd into your project dir, or pass --code DIR with the source dir"
        )
    return cwd


def planned_code(code_dir: str) -> PackedEnv:
    """Where the code dir is (or will be) cached, keyed by what would be shipped; writes nothing."""
    code = codedir.scan(code_dir, MAX_CODE_BYTES)
    local = os.path.join(codedir.cache_dir(), f"{code.fingerprint}.tar.gz")
    return PackedEnv(cache_uri(code.fingerprint, kind="code"), code.fingerprint, local=local, code=code)


def _local_archive(env: PackedEnv, tmp: str, progress: Callable[[str], None]) -> str:
    """The archive to upload: a given one, the code dir's (written to the private cache), or a fresh venv-pack."""
    if env.code is not None:
        if not os.path.exists(env.local):
            codedir.write_archive(env.code, env.local)
        return env.local
    if env.local:
        return env.local
    archive = os.path.join(tmp, "env.tar.gz")
    progress(f"Packing the Python environment {sys.prefix} (once per set of packages) ...")
    if is_conda(sys.prefix):
        try:
            import conda_pack
        except ImportError:
            raise SpecError(
                f"python_env: {sys.prefix} is a conda env, and shipping one needs conda-pack; "
                "`pip install conda-pack` (or `conda install conda-pack`) in it"
            ) from None
        conda_pack.pack(prefix=sys.prefix, output=archive, compress_level=1)
    else:
        import venv_pack

        venv_pack.pack(prefix=sys.prefix, output=archive, compress_level=1)
    return archive


def ensure_uploaded(env: PackedEnv, progress: Callable[[str], None]) -> int:
    """Pack and upload unless cached; return the bytes uploaded (0 when cached)."""
    from tfyarn.storage import locate, parse_uri, put_file  # pyarrow/hdfs-native only when shipping
    from tfyarn.storage.permissions import FILE_MODE, private_cache, set_mode

    dest = locate(parse_uri(env.uri))
    private_cache(dest)
    if dest.exists():
        set_mode(dest, FILE_MODE)  # caches written before this rule
        progress(f"{env.fingerprint} is cached at {env.uri}: uploaded 0 bytes.")
        return 0
    with tempfile.TemporaryDirectory(prefix="tfyarn-pyenv-") as tmp:
        archive = _local_archive(env, tmp, progress)
        size = os.path.getsize(archive)
        progress(f"Uploading {size / 2**20:.1f} MiB to {env.uri} ...")
        shown = [0]

        def tick(done: int, total: int) -> None:
            tenth = done * 10 // max(total, 1)
            if tenth > shown[0]:
                shown[0] = tenth
                progress(f"  {tenth * 10}% ({done / 2**20:.1f} of {total / 2**20:.1f} MiB)")

        put_file(locate(parse_uri(archive)), dest, progress=tick)
        set_mode(dest, FILE_MODE)
    progress(f"{env.fingerprint} uploaded: {size} bytes.")
    return size
