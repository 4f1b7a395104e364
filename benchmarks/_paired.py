"""Paired rounds: each ratio is taken within one round, where both runners met the same machine load.

A ratio of two medians from unpaired rounds moves with whatever else the
shared 2-core machine does; the per-round ratio cancels most of that.
Reported: the median of the per-round ratios, and their spread (lowest and
highest), so a reader sees how far noise could move it.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Paired:
    median: float  # of the per-round ratios a/b
    low: float
    high: float
    rounds: int

    def text(self) -> str:
        return f"{self.median:.2f} ({self.low:.2f}-{self.high:.2f}, {self.rounds} pairs)"

    def to_dict(self) -> dict[str, float | int]:
        return {"median": round(self.median, 3), "low": round(self.low, 3), "high": round(self.high, 3),
                "pairs": self.rounds}


def paired(a: list[float], b: list[float]) -> Paired:
    """The per-round ratios a[i] / b[i] (rounds where either is missing or b is 0 are left out)."""
    ratios = [x / y for x, y in zip(a, b, strict=False) if y]  # a runner's extra round has no pair
    if not ratios:
        raise ValueError("no complete pair of rounds to compare")
    return Paired(statistics.median(ratios), min(ratios), max(ratios), len(ratios))
