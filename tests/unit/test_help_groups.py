"""`submit --help` in sections, every option in one; the other roles' options summarised, all in --help-all."""

from __future__ import annotations

from click.testing import CliRunner

from tfyarn.cli.helpgroups import SECTIONS, section_of
from tfyarn.cli.main import cli
from tfyarn.cli.submit_cmd import submit


def help_text(flag: str) -> str:
    res = CliRunner().invoke(cli, ["submit", flag], terminal_width=100)
    assert res.exit_code == 0, res.output
    return res.output


def test_every_option_belongs_to_a_section():
    names = [p.name or "" for p in submit.params if p.param_type_name == "option"]
    assert [n for n in names if not section_of(n)] == []


def test_help_lists_the_sections_in_order_with_the_other_roles_summarised():
    text = help_text("--help")
    at = [text.index(f"\n{title}:\n") for title in SECTIONS]
    assert at == sorted(at) and "\nOther:\n" not in text
    assert "--worker-memory" in text and "--ps-memory SIZE" not in text and "--chief-restart [" not in text
    assert "--{chief,ps,evaluator}-*" in text
    roles = text[text.index("\nRoles:\n"):text.index("\nData:\n")]
    assert "--num-workers" in roles and "--worker-docker-image" in roles


def test_help_all_lists_every_roles_options():
    text = help_text("--help-all")
    for role in ("chief", "ps", "evaluator"):
        assert f"--{role}-memory SIZE" in text and f"--{role}-docker-image" in text
    assert "--{chief,ps,evaluator}-*" not in text
    assert len(text.splitlines()) > len(help_text("--help").splitlines())
