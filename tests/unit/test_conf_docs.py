"""conf/job.yaml documents every spec key with the code's defaults, and loads as a spec."""
from dataclasses import fields
from pathlib import Path

import yaml

from tfyarn.spec import JobSpec, RoleSpec

CONF = Path(__file__).resolve().parents[2] / "conf"


def test_job_yaml_has_every_key_with_the_code_default():
    doc = yaml.safe_load((CONF / "job.yaml").read_text())
    assert set(doc) == {f.name for f in fields(JobSpec)}
    role = doc["roles"]["worker"]
    assert set(role) | {"name"} == {f.name for f in fields(RoleSpec)}
    defaults = RoleSpec("worker")
    for key, value in role.items():
        assert getattr(defaults, key) == (tuple(value) if isinstance(value, list) else value), key
    job = JobSpec(name="x", command=("x",))
    for key in ("framework", "queue", "node_label", "python_env", "am_memory_mb", "max_attempts",
                "evaluator_may_fail", "overwrite", "download_threads", "upload_threads", "save_every"):
        assert doc[key] == getattr(job, key), key


def test_job_yaml_with_a_command_is_a_valid_spec():
    doc = yaml.safe_load((CONF / "job.yaml").read_text())
    doc["command"] = ["python", "train.py"]
    spec = JobSpec.from_dict(doc)
    assert spec.roles["worker"].instances == 1
