"""The Layout block of docs/contributing.md names every module of tfyarn/ and appmaster/, and nothing that is gone."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A path token: a file with an extension we ship, or anything with a slash (a dir, a nested path).
PATH = re.compile(r"(?<![\w./-])([\w-]+(?:/[\w.-]+)*\.(?:py|sh|yaml)|[\w.-]+(?:/[\w.-]+)+/?|[\w.-]+/)(?![\w/])")


def layout_entries() -> dict[str, str]:
    """Entry dir (``tfyarn/cli/``) -> its description, from the fenced block under ``## Layout``."""
    text = (ROOT / "docs" / "contributing.md").read_text()
    block = text[text.index("## Layout"):].split("```")[1]
    entries: dict[str, str] = {}
    current = ""
    for line in block.splitlines():
        if line and not line[0].isspace():
            current, _, rest = line.partition(" ")
            entries[current] = rest
        elif current:
            entries[current] += " " + line
    return entries


def modules(package: Path) -> set[str]:
    return {p.name for p in package.glob("*.py") if not p.name.startswith("__")}


def test_every_module_is_named_under_its_package():
    entries = layout_entries()
    packages = sorted(p.parent for top in ("tfyarn", "appmaster") for p in (ROOT / top).rglob("__init__.py"))
    for pkg in packages:
        key = f"{pkg.relative_to(ROOT)}/"
        if not modules(pkg):
            continue  # appmaster/ itself: only the two wings
        assert key in entries, f"docs/contributing.md Layout has no entry for {key}"
        named = {m.rsplit("/", 1)[-1] for m in PATH.findall(entries[key]) if m.endswith(".py")}
        assert named == modules(pkg), f"{key}: named {sorted(named - modules(pkg))} that are gone, " \
                                      f"missing {sorted(modules(pkg) - named)}"


def test_every_path_it_names_exists():
    for entry, text in layout_entries().items():
        assert (ROOT / entry).is_dir(), entry
        for token in PATH.findall(text):
            assert (ROOT / entry / token).exists(), f"docs/contributing.md Layout: {entry}{token} does not exist"


def test_the_parser_sees_the_entries():
    """Guards the two tests above: a Layout block they could not read would let anything pass."""
    entries = layout_entries()
    assert {"tfyarn/", "tfyarn/frameworks/", "appmaster/am/", "appmaster/executor/", "tests/"} <= set(entries)
    assert "wire.py" in PATH.findall(entries["tfyarn/"])
    assert "tensorflow/ps_strategy" in PATH.findall(entries["examples/"])  # a nested path, no extension


def test_modules_stay_small():
    """One job per module: none of tfyarn/ or appmaster/ grows past 500 lines."""
    big = {
        str(p.relative_to(ROOT)): n
        for top in ("tfyarn", "appmaster")
        for p in (ROOT / top).rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 500
    }
    assert not big, big
