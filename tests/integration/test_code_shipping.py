"""--code on the real cluster: the code arrives, secrets never do, and the HDFS cache is private."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.integration.conftest import TFYARN, app_id_from, hadoop
from tfyarn import pyenv

PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n"
# Every file the task can see through the shipped code dir, following links as `python train.py` would.
LIST = ("import json, os; root = os.path.realpath('tfyarn-code'); print('SHIPPED', json.dumps(sorted("
        "os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root, followlinks=True) for f in fs)));"
        "print('LINKED', json.dumps(sorted(os.listdir('.'))))")


def code_dir(root: Path) -> Path:
    for rel, text in {"train.py": "print('hi')\n", "pkg/__init__.py": "", ".ssh/id_rsa": PEM,
                      "creds.keytab": "\x05\x02not for the cluster", ".env": "TOKEN=secret\n",
                      "deploy.txt": f"do not ship\n{PEM}"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def mode(cluster, path: str) -> str:
    res = hadoop(cluster, "hdfs", "dfs", "-stat", "%a", path)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def test_code_dir_ships_its_code_only_into_a_private_hdfs_cache(cluster, tmp_path, yarn_apps):
    src = code_dir(tmp_path / "proj")
    uri = pyenv.planned_code(str(src)).uri
    path = uri.removeprefix("hdfs://")
    kind_dir = path.rsplit("/", 1)[0]
    hadoop(cluster, "hdfs", "dfs", "-rm", "-f", "-skipTrash", path)  # the same content is the same key: upload anew
    hadoop(cluster, "hdfs", "dfs", "-chmod", "755", kind_dir.rsplit("/", 1)[0], kind_dir)  # as older tfyarns left it

    res = subprocess.run([*TFYARN, "submit", "--code", str(src), "--worker-memory", "512m", "--wait", "--",
                          "python", "-c", LIST], capture_output=True, text=True, timeout=400, cwd=tmp_path)
    app = app_id_from(res.stdout + res.stderr)
    yarn_apps.append(app)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (f"Shipping code: {src} (2 files, 0.0 MiB; skipped 4: .env, .ssh/, creds.keytab, deploy.txt) "
            "to every task's working dir") in res.stderr, res.stderr

    logs = subprocess.run([*TFYARN, "logs", app], capture_output=True, text=True, timeout=120).stdout
    shipped = json.loads(next(line.split(" ", 1)[1] for line in logs.splitlines() if line.startswith("SHIPPED ")))
    linked = json.loads(next(line.split(" ", 1)[1] for line in logs.splitlines() if line.startswith("LINKED ")))
    assert shipped == ["pkg/__init__.py", "train.py"]
    assert {"train.py", "pkg"} <= set(linked) and not {".ssh", ".env", "creds.keytab", "deploy.txt"} & set(linked)

    assert mode(cluster, path) == "600"
    assert mode(cluster, kind_dir) == "700"
    assert mode(cluster, kind_dir.rsplit("/", 1)[0]) == "700"  # .../.tfyarn
