"""Plain-text tables whose columns fit their content: a long host or job name never runs into the next column."""

from __future__ import annotations

from collections.abc import Sequence

GAP = 2  # spaces between columns


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """The header and rows as lines; each column as wide as its widest cell, the last one unpadded."""
    every = [list(header), *(list(r) for r in rows)]
    if any(len(r) != len(header) for r in every):
        raise ValueError("every row needs one cell per column")
    widths = [max(len(r[i]) for r in every) for i in range(len(header) - 1)]
    return ["".join(c.ljust(w + GAP) for c, w in zip(r[:-1], widths, strict=True)) + r[-1] for r in every]
