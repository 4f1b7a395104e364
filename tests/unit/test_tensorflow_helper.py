"""tfyarn.tensorflow: checkpoint I/O through the chief under ParameterServerStrategy."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tfyarn.tensorflow import CHIEF_CPU, io_device, local_path

ROOT = Path(__file__).resolve().parents[2]


def tf_config(**cluster: list[str]) -> str:
    return json.dumps({"cluster": cluster, "task": {"type": "chief", "index": 0}})


def test_the_chief_does_the_io_only_in_a_parameter_server_job():
    assert io_device(tf_config(chief=["h1:1"], worker=["h2:2"], ps=["h3:3"])) == CHIEF_CPU
    assert io_device(tf_config(chief=["h1:1"], worker=["h2:2"])) is None  # MultiWorkerMirrored: each writes its own
    assert io_device(tf_config(worker=["h2:2"], ps=["h3:3"])) is None
    assert io_device("") is None and io_device("not json") is None and io_device("[]") is None


def test_a_uri_tensorflow_cannot_write_is_refused_saying_what_to_do():
    with pytest.raises(ValueError, match=r"--output DIR:hdfs://"):
        local_path("hdfs:///models/run1/ckpt")
    assert local_path("file:///tmp/m") == "/tmp/m"
    assert local_path("model/ckpt").endswith("/model/ckpt") and local_path("model/ckpt").startswith("/")


def test_the_options_carry_the_chiefs_cpu_in_real_tensorflow():
    """Built by TensorFlow itself (in a subprocess: TF is slow to import and must not load in the CLI's tests)."""
    code = (
        "import json, os\n"
        f"os.environ['TF_CONFIG'] = {tf_config(chief=['h1:1'], worker=['h2:2'], ps=['h3:3'])!r}\n"
        "from tfyarn.tensorflow import checkpoint_options, saved_model_options\n"
        "print(checkpoint_options().experimental_io_device, saved_model_options().experimental_io_device)\n"
        "os.environ['TF_CONFIG'] = ''\n"
        "print(checkpoint_options().experimental_io_device)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [CHIEF_CPU, CHIEF_CPU, "None"]


def test_the_cli_never_imports_it():
    """The helper is for training scripts; `tfyarn` itself must stay free of TensorFlow."""
    code = "import sys; from tfyarn.cli.main import cli; print('tensorflow' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr
