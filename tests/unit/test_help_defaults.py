"""`tfyarn submit --help` shows the job spec's own defaults: a default changed in tfyarn/spec.py changes --help."""
import re
import subprocess
import sys

import pytest

from tfyarn.cli.params import default_help, memory_text, spec_default
from tfyarn.cli.jobfile import _PARAM_KEYS
from tfyarn.cli.submit_cmd import submit
from tfyarn.spec import JobSpec, RoleSpec, parse_memory

JOB = JobSpec(name="x", command=("x",))
ROLE = RoleSpec("worker")
DEFAULT = re.compile(r"\[default: ([^\]]+)\]")
# Options whose default is not the spec's: the CLI's own (--name: tfyarn-<program>), or click's show_default.
NOT_FROM_SPEC = {"name", "input_mode"}


def spec_value(key: str):
    return getattr(ROLE, key.rsplit(".", 1)[-1]) if key.startswith("roles.") else getattr(JOB, key)


def shown_defaults() -> dict[str, str]:
    """Option name -> the default its help text shows."""
    out = {}
    for p in submit.params:
        m = DEFAULT.search(getattr(p, "help", None) or "")
        if m and p.name not in NOT_FROM_SPEC:
            out[p.name] = m.group(1)
    return out


def test_every_shown_default_is_the_specs():
    shown = shown_defaults()
    assert len(shown) >= 6 * 4 + 12, sorted(shown)  # six per role, twelve job-wide
    for name, text in shown.items():
        value = spec_value(_PARAM_KEYS[name])
        if isinstance(value, bool):
            assert text == ("may fail" if value else "must succeed"), name
        elif _PARAM_KEYS[name].endswith("memory_mb"):
            assert parse_memory(text, name) == value, name
        elif _PARAM_KEYS[name].endswith("nproc_per_node") and value == 0:
            assert text == "its GPUs, or 1", name
        else:
            assert text == str(value), name


@pytest.mark.parametrize("key,shown", [("roles.ps.memory_mb", "2g"), ("am_memory_mb", "768m"),
                                       ("queue", "default"), ("roles.chief.restart_policy", "never"),
                                       ("allocation_timeout_s", "300")])
def test_the_helper_reads_the_spec(key, shown):
    assert default_help(key) == f"[default: {shown}]"
    assert spec_default(key) == spec_value(key)


def test_memory_is_written_as_the_flag_takes_it():
    assert [memory_text(mb) for mb in (2048, 768, 1536, 16384)] == ["2g", "768m", "1536m", "16g"]
    for mb in (2048, 768, 1536):
        assert parse_memory(memory_text(mb), "m") == mb


def test_a_key_without_a_default_is_refused():
    with pytest.raises(LookupError, match="command has no default"):
        spec_default("command")


def test_changing_a_spec_default_changes_help():
    code = ("from tfyarn.spec import JobSpec, RoleSpec\n"
            "RoleSpec.__dataclass_fields__['memory_mb'].default = 4096\n"
            "JobSpec.__dataclass_fields__['queue'].default = 'research'\n"
            "from click.testing import CliRunner\n"
            "from tfyarn.cli.submit_cmd import submit\n"
            "print(CliRunner().invoke(submit, ['--help'], terminal_width=1000).output)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "Memory per worker container, e.g. 512m, 4g. [default: 4g]" in " ".join(out.split())
    assert "YARN queue. [default: research]" in " ".join(out.split())
