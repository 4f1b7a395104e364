"""--python-env packed: a job runs from a shipped virtualenv, cached on HDFS by its packages."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import app_id_from, hadoop

ROOT = Path(__file__).resolve().parents[2]
SHOW = "import os, sys; print('EXE', sys.executable); print('CWD', os.getcwd()); import tfyarn; print('TFYARN', tfyarn.__file__)"


@pytest.fixture(scope="module")
def small_venv(tmp_path_factory) -> Path:
    """A fresh virtualenv with a regular (non-editable) tfyarn and its dependencies only."""
    venv = tmp_path_factory.mktemp("pyenv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    res = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", str(ROOT)], capture_output=True,
                         text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    return venv


def submit(venv: Path) -> subprocess.CompletedProcess[str]:
    # Run from a small dir: with a shipped environment the working dir is shipped as code too.
    return subprocess.run([str(venv / "bin" / "tfyarn"), "submit", "--python-env", "packed", "--worker-memory", "512m",
                           "--wait", "--", "python", "-c", SHOW], capture_output=True, text=True, timeout=600,
                          cwd=str(workdir(venv.parent / "work")))


def workdir(path: Path) -> Path:
    path.mkdir(exist_ok=True)
    (path / "README").write_text("a tiny project dir\n")
    return path


def test_packed_environment_runs_the_job_and_is_uploaded_once(cluster, small_venv, yarn_apps):
    uri = subprocess.run([str(small_venv / "bin" / "python"), "-c",
                          "from tfyarn import pyenv; print(pyenv.planned().uri)"],
                         capture_output=True, text=True, check=True).stdout.strip()
    hadoop(cluster, "hdfs", "dfs", "-rm", "-f", "-skipTrash", uri.removeprefix("hdfs://"))

    first = submit(small_venv)
    app = app_id_from(first.stdout + first.stderr)
    yarn_apps.append(app)
    assert first.returncode == 0, first.stdout + first.stderr
    assert f"is cached at {uri}" not in first.stderr and " uploaded: " in first.stderr
    logs = subprocess.run([str(small_venv / "bin" / "tfyarn"), "logs", app], capture_output=True, text=True).stdout
    exe = next(l.split(" ", 1)[1] for l in logs.splitlines() if l.startswith("EXE "))
    cwd = next(l.split(" ", 1)[1] for l in logs.splitlines() if l.startswith("CWD "))
    mod = next(l.split(" ", 1)[1] for l in logs.splitlines() if l.startswith("TFYARN "))
    assert exe == f"{cwd}/pyenv/bin/python"  # the shipped interpreter, under the container's dir
    assert exe != str(small_venv / "bin" / "python")
    assert mod.startswith(f"{cwd}/pyenv/")  # tfyarn itself came in the archive

    second = submit(small_venv)
    yarn_apps.append(app_id_from(second.stdout + second.stderr))
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"is cached at {uri}: uploaded 0 bytes" in second.stderr


def test_a_given_environment_archive_is_used_and_cached(cluster, small_venv, tmp_path, yarn_apps):
    archive = tmp_path / "myenv.tar.gz"
    subprocess.run([str(small_venv / "bin" / "venv-pack"), "-p", str(small_venv), "-o", str(archive),
                    "--compress-level", "1"], check=True, capture_output=True, timeout=600)
    cmd = [str(small_venv / "bin" / "tfyarn"), "submit", "--python-env", str(archive), "--worker-memory", "512m",
           "--wait", "--", "python", "-c", SHOW]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=str(workdir(tmp_path / "w")))
    app = app_id_from(first.stdout + first.stderr)
    yarn_apps.append(app)
    assert first.returncode == 0, first.stdout + first.stderr
    logs = subprocess.run([str(small_venv / "bin" / "tfyarn"), "logs", app], capture_output=True, text=True).stdout
    exe = next(l.split(" ", 1)[1] for l in logs.splitlines() if l.startswith("EXE "))
    assert exe.endswith("/pyenv/bin/python")
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=str(tmp_path / "w"))
    yarn_apps.append(app_id_from(second.stdout + second.stderr))
    assert second.returncode == 0, second.stdout + second.stderr
    assert second.stderr.count("uploaded 0 bytes") == 2  # environment and code both cached


def test_code_dir_is_shipped_and_runs_as_at_home(cluster, tmp_path, yarn_apps):
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("GREETING = 'hello from shipped code'\n")
    (project / "train.py").write_text("import pkg\nprint('CODE', pkg.GREETING)\n")
    (project / ".git").mkdir()
    (project / ".git" / "big").write_bytes(b"x" * 1000)  # never shipped
    res = subprocess.run([sys.executable, "-m", "tfyarn", "submit", "--code", str(project), "--worker-memory",
                          "512m", "--wait", "--", "python", "train.py"],
                         capture_output=True, text=True, timeout=300, cwd="/")
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 0, res.stdout + res.stderr
    logs = subprocess.run([sys.executable, "-m", "tfyarn", "logs", app], capture_output=True, text=True).stdout
    assert "CODE hello from shipped code" in logs


def test_by_default_an_environment_no_node_can_see_is_shipped_with_the_script(cluster, small_venv, tmp_path,
                                                                              yarn_apps):
    """No --python-env, no --file: the client's venv is visible only in its own mount namespace.

    On the host (node 1's view) and in node 2's, the dir the client runs its venv from is empty, as a
    real cluster's nodes lack the submitter's venv; python_env auto must see that and ship it, and
    `python train.py` must find the script that sits in the submit's current dir.
    """
    hidden = tmp_path / "hidden-venv"
    hidden.mkdir()
    work = workdir(tmp_path / "project")
    (work / "train.py").write_text(SHOW.replace("; ", "\n") + "\nprint('SCRIPT ran')\n")
    run = (f'mount --bind "$1" "$2" && cd "$3" && exec "$2/bin/python" -m tfyarn submit --worker-memory 512m '
           "--name it-auto-env --wait -- python train.py")
    res = subprocess.run(["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", run, "sh",
                          str(small_venv), str(hidden), str(work)], capture_output=True, text=True, timeout=600)
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"python_env auto: packed (the local cluster's node 1 does not see {hidden}" in res.stderr, res.stderr
    assert not any(hidden.iterdir())  # outside the client's namespace the venv was never there
    logs = subprocess.run([sys.executable, "-m", "tfyarn", "logs", app], capture_output=True, text=True).stdout
    cwd = next(l.split(" ", 1)[1] for l in logs.splitlines() if l.startswith("CWD "))
    assert f"EXE {cwd}/pyenv/bin/python" in logs and "SCRIPT ran" in logs


def test_a_script_nothing_ships_is_refused_before_anything_is_submitted(cluster, tmp_path):
    work = workdir(tmp_path / "project")
    (work / "train.py").write_text("print('never runs')\n")
    res = subprocess.run([sys.executable, "-m", "tfyarn", "submit", "--python-env", "local", "--", "python",
                          "train.py"], capture_output=True, text=True, timeout=120, cwd=str(work))
    assert res.returncode == 2, res.stdout + res.stderr
    assert res.stderr.strip().splitlines()[-1] == (
        f"Error: command: train.py is a file in {work}, which the containers do not get (each runs in a dir of "
        "its own); add --file train.py (ships the file) or --code . (ships this dir)")
    assert "application_" not in res.stdout + res.stderr
