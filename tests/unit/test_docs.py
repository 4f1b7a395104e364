"""The README and docs/: the quick tour is the script `make demo` runs, and every relative link resolves."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def readme_tour() -> str:
    """The commands of the README's quick tour: the fenced block between its tour markers."""
    text = (ROOT / "README.md").read_text()
    block = text.split("<!-- tour:begin", 1)[1].split("<!-- tour:end -->", 1)[0]
    return block.split("```bash\n", 1)[1].split("```", 1)[0]


def test_the_readme_tour_is_what_make_demo_runs():
    script = (ROOT / "examples" / "tour.sh").read_text()
    body = script.split("# tour:begin\n", 1)[1].split("# tour:end", 1)[0]
    assert readme_tour() == body
    assert "tfyarn fetch" in body and "--output model:hdfs://" in body and "--input hdfs://" in body
    assert "bash examples/tour.sh" in (ROOT / "Makefile").read_text().split("\ndemo:", 1)[1].split("\n\n")[0]


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headers: lower case, punctuation dropped, spaces as dashes."""
    heads = [line.lstrip("#").strip() for line in page.read_text().splitlines() if line.startswith("#")]
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in heads}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    links = [m for m in LINK.findall(page.read_text()) if "://" not in m]
    for link in links:
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        assert target.exists(), f"{page.relative_to(ROOT)} links to {link}, which does not exist"
        if anchor:
            assert anchor in anchors(target), f"{page.relative_to(ROOT)}: no header for #{anchor} in {target.name}"


def test_the_link_check_sees_links():
    """Guards the test above: a page set or pattern that found nothing would let anything pass."""
    assert len(PAGES) >= 8
    readme_links = LINK.findall((ROOT / "README.md").read_text())
    assert "docs/data.md" in readme_links and "#a-5-minute-tour" in readme_links
    assert "a-5-minute-tour" in anchors(ROOT / "README.md")
