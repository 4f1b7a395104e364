"""Code shipping (tfyarn.pyenv, tfyarn.codedir): what never leaves the machine, and the private caches."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tfyarn import codedir, pyenv
from tfyarn.errors import SpecError, StorageError
from tfyarn.storage import locate, parse_uri
from tfyarn.storage.permissions import private_cache, set_mode

PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
SHIPPED = {"train.py", "pkg/__init__.py", "pkg/model.py", "notes.md"}


def project(root: Path) -> Path:
    """A project dir holding what a real one does: code, and secrets that must stay home."""
    files = {
        "train.py": "print('train')\n", "pkg/__init__.py": "", "pkg/model.py": "W = 1\n", "notes.md": "# notes\n",
        ".ssh/id_rsa": PEM, ".aws/credentials": "[default]\naws_secret_access_key = x\n", ".env": "TOKEN=x\n",
        ".git/config": "[core]\n", "pkg/__pycache__/model.cpython-311.pyc": "x", "x.keytab": "\x05\x02keytab",
        "creds": "\x05\x02a keytab by its content", "deploy.txt": f"the key:\n{PEM}", "server.pem": "cert",
        "tls.key": "k", "id_ed25519": "k", "store.jks": "k", "venv/pyvenv.cfg": "home = /usr\n",
        "venv/lib/site.py": "",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def archive_names(code_dir: Path, tmp: Path) -> set[str]:
    env = pyenv.planned_code(str(code_dir))
    dest = tmp / "out" / "code.tar.gz"
    codedir.write_archive(env.code, str(dest))  # type: ignore[arg-type]
    with tarfile.open(dest) as tar:
        return {m.name for m in tar.getmembers()}


def dry_run(*args: str, home: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    env.pop("XDG_CACHE_HOME", None)
    return subprocess.run([sys.executable, "-m", "tfyarn", "submit", *args, "--dry-run=yarn", "--", "python", "train.py"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=cwd)


def test_only_the_code_is_shipped_never_secrets_caches_or_venvs(tmp_path):
    root = project(tmp_path / "proj")
    assert archive_names(root, tmp_path) == SHIPPED
    skipped = pyenv.planned_code(str(root)).code.skipped  # type: ignore[union-attr]
    assert {".ssh/", ".aws/", ".env", ".git/", "pkg/__pycache__/", "x.keytab", "creds", "deploy.txt", "server.pem",
            "tls.key", "id_ed25519", "store.jks", "venv/"} == set(skipped)


def test_summary_names_the_dir_the_count_and_what_was_skipped(tmp_path):
    root = project(tmp_path / "proj")
    text = pyenv.planned_code(str(root)).summary
    assert text.startswith(f"{root} (4 files, 0.0 MiB; skipped 13: .aws/, .env, .git/, .ssh/, ")
    assert text.endswith(" and 5 more)")


def test_a_link_inside_the_dir_is_shipped_as_its_target_and_a_link_to_a_secret_is_not(tmp_path):
    root = project(tmp_path / "proj")
    (root / "main.py").symlink_to("train.py")
    (root / "lib").symlink_to("pkg")
    (root / "key.txt").symlink_to(".ssh/id_rsa")
    names = archive_names(root, tmp_path)
    assert names == SHIPPED | {"main.py", "lib/__init__.py", "lib/model.py"}


@pytest.mark.parametrize("make, words", [
    (lambda r: (r / "gone.py").symlink_to(r / "missing.py"), ["gone.py is a dangling symlink", "missing.py"]),
    (lambda r: (r / "passwd").symlink_to("/etc/passwd"), ["passwd links to /etc/passwd, outside the shipped dir"]),
    (lambda r: (r / "pkg" / "up").symlink_to(".."), ["pkg/up links to", "(a loop)"]),
    (lambda r: os.mkfifo(r / "pipe"), ["pipe is a FIFO, not a regular file"]),
])
def test_bad_entries_are_one_error_line_never_a_hang_or_traceback(tmp_path, make, words):
    root = project(tmp_path / "proj")
    make(root)
    res = dry_run("--code", str(root), home=tmp_path / "home")  # a FIFO once made this hang: timeout=60 fails it
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.startswith("Error: --code: ") and res.stderr.count("\n") == 1, res.stderr
    assert all(w in res.stderr for w in words), res.stderr
    assert not (tmp_path / "home" / ".cache").exists()


def test_the_home_dir_is_never_shipped_implicitly(tmp_path, monkeypatch):
    home = project(tmp_path / "home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home)
    with pytest.raises(SpecError, match="that is your home dir .*cd into your project dir, or pass --code DIR"):
        pyenv.shipped_code_dir("", "packed")
    assert pyenv.shipped_code_dir("", "local") == ""
    assert pyenv.shipped_code_dir("src", "packed") == "src"
    monkeypatch.chdir(home / "pkg")
    assert pyenv.shipped_code_dir("", "env.tar.gz") == str(home / "pkg")
    monkeypatch.chdir(tmp_path)  # above home: it would ship home too
    with pytest.raises(SpecError, match="a dir that holds your home dir"):
        pyenv.shipped_code_dir("", "packed")


def test_the_home_dir_refusal_is_an_error_line_from_the_cli(tmp_path):
    home = project(tmp_path / "home")
    res = dry_run("--python-env", "packed", home=home, cwd=home)
    assert res.returncode == 2 and res.stderr.startswith("Error: --python-env: ") and "home dir" in res.stderr


def test_over_the_cap_names_the_largest_files_and_the_fix(tmp_path, monkeypatch):
    root = project(tmp_path / "proj")
    (root / "data.bin").write_bytes(b"x" * 3 * 2**20)
    (root / "ckpt").mkdir()
    (root / "ckpt" / "model.h5").write_bytes(b"x" * 2**20)
    monkeypatch.setattr(pyenv, "MAX_CODE_BYTES", 2**20)
    with pytest.raises(SpecError) as e:
        pyenv.planned_code(str(root))
    assert "over the 1 MiB cap; the largest: data.bin (3.0 MiB), ckpt/model.h5 (1.0 MiB)" in str(e.value)
    assert "--input" in str(e.value) and "--code" in str(e.value)


def test_the_fingerprint_includes_file_modes(tmp_path):
    root = project(tmp_path / "proj")
    before = pyenv.planned_code(str(root)).fingerprint
    (root / "train.py").chmod(0o755)
    assert pyenv.planned_code(str(root)).fingerprint != before


def test_different_dirs_never_share_a_fingerprint(tmp_path):
    # Hashed as path, NUL, content, one after another, both were "a\0b\0c".
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    (one / "a").write_bytes(b"b\0c")
    (two / "a").write_bytes(b"")
    (two / "b").write_bytes(b"c")
    assert pyenv.planned_code(str(one)).fingerprint != pyenv.planned_code(str(two)).fingerprint


def test_dry_run_writes_nothing_and_says_what_would_be_shipped(tmp_path):
    root = project(tmp_path / "proj")
    home = tmp_path / "home"
    home.mkdir()
    res = dry_run("--code", str(root), home=home)
    assert res.returncode == 0, res.stderr
    assert f"# code: {root} (4 files, 0.0 MiB; skipped 13: " in res.stdout
    assert list(home.iterdir()) == []


def test_the_local_archive_is_0600_in_0700_dirs_whatever_the_umask(tmp_path, monkeypatch):
    root = project(tmp_path / "proj")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    old = os.umask(0)
    try:
        env = pyenv.planned_code(str(root))
        assert not os.path.exists(env.local)  # planning writes nothing
        codedir.write_archive(env.code, env.local)  # type: ignore[arg-type]
    finally:
        os.umask(old)
    assert env.local == str(tmp_path / "home" / ".cache" / "tfyarn" / "code" / f"{env.fingerprint}.tar.gz")
    assert stat.S_IMODE(os.stat(env.local).st_mode) == 0o600
    for d in (".cache", ".cache/tfyarn", ".cache/tfyarn/code"):
        assert stat.S_IMODE(os.stat(tmp_path / "home" / d).st_mode) == 0o700, d
    assert os.listdir(os.path.dirname(env.local)) == [os.path.basename(env.local)]  # no .part left


def test_an_existing_open_cache_dir_is_made_private(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    cache = tmp_path / ".cache" / "tfyarn" / "code"
    cache.mkdir(parents=True, mode=0o755)
    cache.chmod(0o755)
    env = pyenv.planned_code(str(project(tmp_path / "proj")))
    codedir.write_archive(env.code, env.local)  # type: ignore[arg-type]
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700


def test_a_file_changed_after_the_scan_is_refused_not_shipped_mismatched(tmp_path):
    root = project(tmp_path / "proj")
    env = pyenv.planned_code(str(root))
    (root / "train.py").write_text("print('TRAIN')\n")  # same size, other content
    with pytest.raises(SpecError, match="train.py changed while it was packed; submit again"):
        codedir.write_archive(env.code, str(tmp_path / "out" / "c.tar.gz"))  # type: ignore[arg-type]
    assert os.listdir(tmp_path / "out") == []


def test_private_cache_dirs_are_0700_on_the_destination_filesystem(tmp_path):
    dest = locate(parse_uri(str(tmp_path / ".tfyarn" / "code" / "x.tar.gz")))
    old = os.umask(0)
    try:
        private_cache(dest)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / ".tfyarn").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / ".tfyarn" / "code").stat().st_mode) == 0o700


def test_a_cache_path_that_cannot_be_made_private_is_one_error_line(tmp_path):
    dest = locate(parse_uri(str(tmp_path / ".tfyarn" / "code" / "missing.tar.gz")))
    with pytest.raises(StorageError, match=r"^cannot make .*missing.tar.gz private to you \(.*\); check that you own"):
        set_mode(dest, 0o600)
