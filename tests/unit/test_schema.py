"""The job file's JSON Schema: generated from the spec, shipped, and in step with tfyarn's own checks."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from tfyarn import schema
from tfyarn.errors import SpecError
from tfyarn.spec import JobSpec

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "tfyarn" / "job.schema.json"
VALIDATOR = jsonschema.Draft202012Validator(json.loads(SHIPPED.read_text()))

BASE = {"name": "j", "command": ["python", "t.py"], "roles": {"worker": {"instances": 1}}}
GOOD = [
    {"roles": {"worker": {"instances": 2, "memory_mb": "4g", "permanent_exit_codes": [2, "3"]}}},
    {"roles": {"worker": None}, "framework": "pytorch"},
    {"inputs": ["hdfs:///data/x", {"src": "hdfs:///data/y", "dest": "y", "mode": "shard"}],
     "outputs": ["./model:hdfs:///models/run1"]},
    {"output_mode": 750, "am_memory_mb": 1024, "env": {"A": "1"}, "docker_runtime": "executor"},
    {"max_runtime_s": "1h30m"}, {"max_runtime_s": 600}, {"max_runtime_s": "45"},
    {"framework": "tensorflow", "roles": {"chief": {}, "worker": {}, "ps": {"restart_policy": "on-failure",
                                                            "docker_image": "tfyarn-tf:latest"}}},
]
BAD = [
    {"workers": 2},  # not a key
    {"roles": {"worker": {"instance": 2}}},  # a role's key misspelt
    {"framework": "jax"},
    {"roles": {"worker": {"restart_policy": "always"}}},
    {"roles": {"worker": {"memory_mb": "lots"}}},
    {"max_runtime_s": "an hour"}, {"max_runtime_s": -5}, {"max_runtime_s": "30m2h"},
    {"roles": {"worker": {"permanent_exit_codes": "2,3"}}},
    {"output_mode": "777x"},
    {"command": "python t.py"},  # one string, not a list
    {"tensorboard": "yes"},
    {"env": {"B": 2}},
    {"inputs": [{"src": "hdfs:///x", "dst": "y"}]},
]


def test_the_shipped_schema_is_the_generated_one():
    assert SHIPPED.read_text() == schema.text(), "regenerate: python -m tfyarn.schema > tfyarn/job.schema.json"


def test_the_documented_job_file_validates():
    doc = yaml.safe_load((ROOT / "conf" / "job.yaml").read_text())
    VALIDATOR.validate(doc)
    assert set(doc) == set(VALIDATOR.schema["properties"])  # and it documents every key the schema has


@pytest.mark.parametrize("extra", GOOD)
def test_what_the_schema_takes_tfyarn_takes(extra):
    VALIDATOR.validate({**BASE, **extra})
    JobSpec.from_dict({**BASE, **extra})


@pytest.mark.parametrize("extra", BAD)
def test_what_the_schema_refuses_tfyarn_refuses(extra):
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate({**BASE, **extra})
    with pytest.raises(SpecError):
        JobSpec.from_dict({**BASE, **extra})
