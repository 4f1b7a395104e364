"""Golden plans of every example (each dir with a submit.sh): their submit.sh --dry-run, compared whole.

Paths that differ between machines (the repo, the Python interpreter) are
replaced by placeholders; the job spec inside the AM's environment is
decoded so that a change to it shows up as data, not as base64.
Regenerate after an intended change: python tests/unit/test_example_plans.py
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tfyarn import protocol

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"
EXAMPLES = sorted(str(p.parent.relative_to(ROOT / "examples")) for p in (ROOT / "examples").glob("*/*/submit.sh"))


# The examples are templates: counts from the environment, and TFYARN_SUBMIT_FLAGS last, so it wins.
OVERRIDDEN = ("tensorflow/ps_strategy", {"NUM_WORKERS": "3"}, "--num-ps 2 --worker-memory 2g --num-workers 5")


def dry_run(example: str, env_extra: dict[str, str] | None = None, flags: str = "") -> str:
    # A dry run must not need a cluster. python_env auto would ship a non-editable venv: the plan
    # is pinned to local, so it does not depend on how this venv was installed.
    env = {**os.environ, "TFYARN": f"{sys.executable} -m tfyarn", "HADOOP_CONF_DIR": "/nonexistent",
           "TFYARN_SUBMIT_FLAGS": f"--dry-run=yarn --python-env local {flags}".strip(), **(env_extra or {})}
    proc = subprocess.run(["bash", str(ROOT / "examples" / example / "submit.sh")], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def normalized(text: str) -> str:
    doc = yaml.safe_load(text)
    doc["master"]["env"][protocol.ENV_JOB] = protocol.decode_env(doc["master"]["env"][protocol.ENV_JOB])
    doc["tags"] = sorted(doc["tags"])
    out = json.dumps(doc, indent=1, sort_keys=True)
    return out.replace(str(ROOT), "<repo>").replace(sys.executable, "<python>")


def test_every_example_is_planned():
    assert len(EXAMPLES) == 5 and {"pytorch/streaming", "pytorch/elastic"} <= set(EXAMPLES), EXAMPLES


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_plan_matches_golden(example):
    text = dry_run(example)
    assert text.startswith("# tfyarn job")  # the human summary comes first
    golden = GOLDEN / f"{example.replace('/', '_')}.json"
    assert normalized(text) == golden.read_text()


def test_the_environment_and_tfyarn_submit_flags_override_an_examples_counts():
    example, env, flags = OVERRIDDEN
    text = normalized(dry_run(example, env, flags))
    job = json.loads(text)["master"]["env"][protocol.ENV_JOB]
    roles = job["roles"]
    assert (roles["worker"]["instances"], roles["ps"]["instances"]) == (5, 2)  # the flags, after NUM_WORKERS=3
    assert roles["worker"]["memory_mb"] == 2048 and roles["chief"]["memory_mb"] == 1536
    assert text == (GOLDEN / "tensorflow_ps_strategy_overridden.json").read_text()
    assert '"instances": 3' in normalized(dry_run(example, env))  # NUM_WORKERS alone


if __name__ == "__main__":
    for ex in EXAMPLES:
        (GOLDEN / f"{ex.replace('/', '_')}.json").write_text(normalized(dry_run(ex)))
        print("wrote", ex)
    example, env, flags = OVERRIDDEN
    (GOLDEN / "tensorflow_ps_strategy_overridden.json").write_text(normalized(dry_run(example, env, flags)))
    print("wrote the overridden", example)
