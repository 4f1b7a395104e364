"""What a shipped code dir holds: the rule, its fingerprint and its private local archive.

The dir shipped is ``--code DIR``, else (a shipped environment) the current
dir, which is often a home or project dir holding credentials. So a rule
decides what never leaves the machine, whatever the user forgot:

- any entry whose name starts with ``.`` (.ssh, .aws, .git, .env, .netrc ...),
  ``__pycache__``, and venvs (a dir holding ``pyvenv.cfg``);
- Kerberos keytabs (``*.keytab``, or a file that starts like one: 0x05 0x01/0x02);
- private keys (``*.pem``, ``*.key``, ``id_rsa*``, ``id_ed25519*``, ``id_ecdsa*``,
  ``*.p12``, ``*.pfx``, ``*.jks``, or a file whose first 4 KiB hold a PEM private key).

Links are followed only inside the dir (one to outside, dangling, or a loop is an
error naming it), and a FIFO, socket or device is an error: never opened, so never
a hang. Nothing here writes until ``write_archive``, so ``--dry-run`` stays pure.
"""

from __future__ import annotations

import fnmatch
import gzip
import hashlib
import os
import re
import stat
import struct
import tarfile
import tempfile
from dataclasses import dataclass
from typing import BinaryIO

from tfyarn.errors import SpecError

NEVER_SHIP_NAMES = ("__pycache__",)
NEVER_SHIP_GLOBS = ("*.keytab", "*.pem", "*.key", "id_rsa*", "id_ed25519*", "id_ecdsa*", "*.p12", "*.pfx", "*.jks")
SNIFF_BYTES = 4096
_PEM_PRIVATE = re.compile(rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
_FP_VERSION = b"tfyarn-code-2\0"  # a new record format: old cache keys never match
_SHOWN_SKIPPED = 8


@dataclass(frozen=True)
class CodeFile:
    source: str  # the real path read (a link's target, inside the dir)
    rel: str  # its path in the archive
    mode: int
    size: int
    digest: bytes  # sha256 of the content


@dataclass(frozen=True)
class CodeDir:
    root: str
    files: tuple[CodeFile, ...]
    skipped: tuple[str, ...]  # relative paths never shipped, dirs with a trailing /
    fingerprint: str

    @property
    def total(self) -> int:
        return sum(f.size for f in self.files)

    def summary(self) -> str:
        """E.g. ``/src (12 files, 0.3 MiB; skipped 3: .ssh/, x.keytab, id_rsa)``: said on every submit."""
        text = f"{self.root} ({len(self.files)} files, {self.total / 2**20:.1f} MiB"
        if self.skipped:
            shown = ", ".join(self.skipped[:_SHOWN_SKIPPED])
            more = f" and {len(self.skipped) - _SHOWN_SKIPPED} more" if len(self.skipped) > _SHOWN_SKIPPED else ""
            text += f"; skipped {len(self.skipped)}: {shown}{more}"
        return text + ")"


def never_shipped_name(name: str) -> bool:
    """Dotfiles, caches and key/keytab file names: never shipped, whatever they hold."""
    low = name.lower()
    return (
        name.startswith(".") or name in NEVER_SHIP_NAMES or any(fnmatch.fnmatchcase(low, g) for g in NEVER_SHIP_GLOBS)
    )


def secret_content(head: bytes) -> bool:
    """A keytab (version 0x05 0x01/0x02) or a PEM private key in a file's first bytes."""
    return head[:1] == b"\x05" and head[1:2] in (b"\x01", b"\x02") or bool(_PEM_PRIVATE.search(head[:SNIFF_BYTES]))


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


def _inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _follow(root: str, path: str, rel: str) -> tuple[str, os.stat_result]:
    """A link's real target and its stat; refused when dangling, looping, or leading out of the dir."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise SpecError(
            f"code: {path} is a dangling symlink (to {os.readlink(path)}); remove it or fix its target"
        ) from None
    except OSError as e:
        raise SpecError(f"code: {path} is a symlink that cannot be followed ({e.strerror}); remove it") from None
    target = os.path.realpath(path)
    if not _inside(root, target):
        raise SpecError(
            f"code: {path} links to {target}, outside the shipped dir {root}; copy what it needs "
            "into the dir (or ship data with --input) and remove the link"
        )
    return target, st


def _unreadable(path: str, e: OSError) -> SpecError:
    return SpecError(f"code: cannot read {path} ({e.strerror}); make it readable or move it out of the shipped dir")


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError as e:
        raise _unreadable(path, e) from None


def _walk(root: str) -> tuple[list[tuple[str, str, os.stat_result]], list[str]]:
    """(real path, relative path, stat) of every regular file the name rule lets through, and what it skipped."""
    found: list[tuple[str, str, os.stat_result]] = []
    skipped: list[str] = []
    stack: list[tuple[str, str, tuple[str, ...]]] = [("", root, (root,))]
    while stack:
        rel_dir, real_dir, chain = stack.pop()
        for name in sorted(_listdir(real_dir)):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            path = os.path.join(real_dir, name)
            try:
                st = os.lstat(path)
            except OSError as e:  # gone since the listing
                raise _unreadable(os.path.join(root, rel), e) from None
            slash = "/" if stat.S_ISDIR(st.st_mode) else ""
            if never_shipped_name(name):
                skipped.append(rel + slash)
                continue
            real = path
            if stat.S_ISLNK(st.st_mode):
                real, st = _follow(root, os.path.join(root, rel), rel)
                parts = os.path.relpath(real, root).split(os.sep) if real != root else []
                if any(never_shipped_name(part) for part in parts):
                    skipped.append(rel)  # a link to a secret is the secret
                    continue
            if stat.S_ISDIR(st.st_mode):
                if os.path.exists(os.path.join(real, "pyvenv.cfg")):
                    skipped.append(rel + "/")
                elif real in chain:
                    raise SpecError(
                        f"code: {os.path.join(root, rel)} links to {real}, a dir it is inside of "
                        "(a loop); remove the link"
                    )
                else:
                    stack.append((rel, real, (*chain, real)))
            elif stat.S_ISREG(st.st_mode):
                found.append((real, rel, st))
            else:
                raise SpecError(
                    f"code: {os.path.join(root, rel)} is a {_kind(st.st_mode)}, not a regular file; "
                    f"move it out of {root} (or point --code at the source dir)"
                )
    return found, skipped


def _check_cap(root: str, found: list[tuple[str, str, os.stat_result]], max_bytes: int) -> None:
    total = sum(st.st_size for _, _, st in found)
    if total <= max_bytes:
        return
    largest = sorted(found, key=lambda f: -f[2].st_size)[:3]
    names = ", ".join(f"{rel} ({st.st_size / 2**20:.1f} MiB)" for _, rel, st in largest)
    raise SpecError(
        f"code: {root} holds {total / 2**20:.1f} MiB, over the {max_bytes >> 20} MiB cap; the largest: "
        f"{names}. Ship data with --input, and point --code at the source dir only"
    )


def _open_regular(path: str) -> BinaryIO:
    """Open a file for reading only if it is (still) a regular file: a FIFO would block forever."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise SpecError(f"code: {path} is no longer a regular file; move it out of the shipped dir")
    return os.fdopen(fd, "rb")


def _read(real: str, rel: str, st: os.stat_result) -> CodeFile | None:
    """The file's record, or None when its content is a secret."""
    h = hashlib.sha256()
    size = 0
    try:
        with _open_regular(real) as f:
            head = f.read(SNIFF_BYTES)
            if secret_content(head):
                return None
            block = head
            while block:
                h.update(block)
                size += len(block)
                block = f.read(1 << 20)
    except OSError as e:
        raise _unreadable(real, e) from None
    return CodeFile(real, rel, stat.S_IMODE(st.st_mode), size, h.digest())


def fingerprint(files: tuple[CodeFile, ...]) -> str:
    """A hash of length-prefixed (path, mode, size, content hash) records: two different dirs never collide."""
    h = hashlib.sha256(_FP_VERSION)
    for f in files:
        rel = f.rel.encode("utf-8", "surrogateescape")
        h.update(struct.pack(">Q", len(rel)) + rel + struct.pack(">IQ", f.mode, f.size) + f.digest)
    return h.hexdigest()[:20]


def scan(code_dir: str, max_bytes: int) -> CodeDir:
    """What shipping ``code_dir`` sends, by the rule above; reads files, writes nothing."""
    root = os.path.realpath(code_dir)
    if not os.path.isdir(root):
        raise SpecError(f"code: {code_dir!r} is not a directory")
    found, skipped = _walk(root)
    _check_cap(root, found, max_bytes)
    files = []
    for real, rel, st in found:
        record = _read(real, rel, st)
        if record is None:
            skipped.append(rel)
        else:
            files.append(record)
    shipped = tuple(sorted(files, key=lambda f: f.rel))
    return CodeDir(root, shipped, tuple(sorted(skipped)), fingerprint(shipped))


def cache_dir() -> str:
    """~/.cache/tfyarn/code: where code archives are written (only by ``write_archive``)."""
    return os.path.join(os.path.expanduser("~"), ".cache", "tfyarn", "code")


def private_dir(path: str) -> str:
    """Create ``path`` and the parents missing 0700; an existing ``path`` is made 0700 (older caches were not)."""
    parent = os.path.dirname(path)
    if parent != path and not os.path.isdir(parent):
        private_dir(parent)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        if stat.S_IMODE(os.stat(path).st_mode) & 0o077:
            os.chmod(path, 0o700)
    return path


class _Hashing:
    """A reader that hashes what tarfile takes, so the archive provably matches the fingerprint."""

    def __init__(self, f: BinaryIO) -> None:
        self.f, self.h = f, hashlib.sha256()

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.h.update(data)
        return data


def write_archive(code: CodeDir, dest: str) -> None:
    """The code's tar.gz at ``dest``, created 0600 in a 0700 dir, appearing only once complete."""
    fd, part = tempfile.mkstemp(dir=private_dir(os.path.dirname(dest)), suffix=".part")  # mkstemp: 0600
    try:
        with (
            os.fdopen(fd, "wb") as raw,
            gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz,
            tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar,
        ):
            for f in code.files:
                _add(tar, f)
        os.replace(part, dest)
    except BaseException:
        os.unlink(part)
        raise


def _add(tar: tarfile.TarFile, f: CodeFile) -> None:
    info = tarfile.TarInfo(f.rel)
    info.size, info.mode = f.size, f.mode
    with _open_regular(f.source) as src:
        info.mtime = int(os.fstat(src.fileno()).st_mtime)
        reader = _Hashing(src)
        try:
            tar.addfile(info, reader)
        except OSError:
            reader.h.update(b"\0")  # shorter than scanned: reported as changed below
        if reader.h.digest() != f.digest:
            raise SpecError(f"code: {f.source} changed while it was packed; submit again")
