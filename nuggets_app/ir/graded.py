"""Graded relevance inferred from nuggets and from an ordinal relevance model.

Pure and Django-free. Two routes to a document's grade:

* **From the nuggets it matches** (:func:`nugget_grade`, the matcher's rule): among the
  nuggets whose min-span score reaches ``threshold``, take the highest nugget grade
  ``g``; a match weaker than ``strong`` counts one grade lower (never below 1), and
  matching ``several`` distinct nuggets at or above ``threshold`` adds one grade (never
  above ``max_grade``). No nugget at ``threshold``: grade 0. So the stronger the match
  with more relevant nuggets, the higher the grade, as the paper puts it.
* **From the model** (:class:`Ordinal`): one calibrated binary model per level ``g``
  gives ``P(grade >= g)`` (the cumulative decomposition of ordinal regression, each
  fitted on the judged sample like the binary model); the cumulative probabilities are
  made non-increasing in ``g`` (running minimum), which gives per-grade probabilities
  ``P(grade = g)``, the expected gain ``Σ_g P(grade >= g) (gain(g) - gain(g-1))`` and
  the median grade (the largest ``g`` with ``P(grade >= g) >= 0.5``).

Expected nDCG takes the expected gains as its gains
(:func:`nuggets_app.ir.expected.expected_ndcg`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nuggets_app.errors import DomainError


class GradedError(DomainError):
    """Graded inference cannot be made as asked; the message says why."""


def nugget_grade(
    matches: Mapping[int, tuple[int, float]],
    *,
    threshold: float = 0.5,
    strong: float = 0.8,
    several: int = 2,
    max_grade: int = 3,
) -> int:
    """A document's grade from ``{nugget id: (nugget grade, min-span score)}``."""
    if not 0 <= threshold <= strong:
        raise GradedError(f"need 0 <= threshold <= strong, got {threshold}, {strong}")
    hits = [(g, s) for g, s in matches.values() if s >= threshold and g > 0]
    if not hits:
        return 0
    best = max(g if s >= strong else max(g - 1, 1) for g, s in hits)
    if several > 1 and len(hits) >= several:
        best += 1
    return min(best, max_grade)


@dataclass(frozen=True)
class Ordinal:
    """``P(grade >= g)`` for g = 1..G of one document (``cumulative[g - 1]``), made
    non-increasing in ``g`` on construction."""

    cumulative: tuple[float, ...]

    @classmethod
    def from_levels(cls, p_at_least: Sequence[float]) -> Ordinal:
        """From the raw per-level probabilities (any order violations removed)."""
        out: list[float] = []
        running = 1.0
        for p in p_at_least:
            if not 0.0 <= p <= 1.0:
                raise GradedError(f"probability {p} outside [0, 1]")
            running = min(running, p)
            out.append(running)
        return cls(tuple(out))

    def grade_probabilities(self) -> tuple[float, ...]:
        """``P(grade = g)`` for g = 0..G (sums to 1)."""
        levels = (1.0, *self.cumulative, 0.0)
        return tuple(levels[g] - levels[g + 1] for g in range(len(levels) - 1))

    def expected_gain(self, gains: Sequence[float] | None = None) -> float:
        """``E[gain(grade)]``; ``gains[g]`` for g = 0..G (default: the grade itself)."""
        width = len(self.cumulative)
        values = (
            list(gains) if gains is not None else [float(g) for g in range(width + 1)]
        )
        if len(values) != width + 1:
            raise GradedError(f"need {width + 1} gains (grades 0..{width})")
        return sum(
            self.cumulative[g - 1] * (values[g] - values[g - 1])
            for g in range(1, width + 1)
        )

    def median_grade(self) -> int:
        """The largest grade ``g`` with ``P(grade >= g) >= 0.5`` (0 when none)."""
        return sum(1 for p in self.cumulative if p >= 0.5)


def stat_ndcg(
    ranking: Sequence[str],
    judged: Mapping[str, tuple[int, float]],
    k: int,
) -> float:
    """statAP-style nDCG@k from a sample: ``judged`` maps a sampled docno to (grade,
    inclusion probability). DCG@k is the Horvitz-Thompson sum over the sampled
    documents in the top k, ``Σ grade / (π · log2(rank + 1))`` (unbiased); the ideal
    DCG@k ranks ``round(Σ 1/π)`` documents of each grade (the estimated number of
    documents of that grade in the pool) best first. NaN when no sampled document has
    a positive grade. With every document sampled (π = 1) it is nDCG@k."""
    if k < 1:
        raise GradedError(f"k must be >= 1, got {k}")
    for docno, (_, pi) in judged.items():
        if not 0 < pi <= 1:
            raise GradedError(f"{docno}: inclusion probability {pi} outside (0, 1]")
    counts: dict[int, float] = {}
    for grade, pi in judged.values():
        if grade > 0:
            counts[grade] = counts.get(grade, 0.0) + 1.0 / pi
    ideal: list[int] = []
    for grade in sorted(counts, reverse=True):
        ideal.extend([grade] * max(round(counts[grade]), 1))
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:k]))
    if idcg <= 0:
        return math.nan
    dcg = 0.0
    for i, docno in enumerate(ranking[:k]):
        hit = judged.get(docno)
        if hit is not None and hit[0] > 0:
            dcg += hit[0] / (hit[1] * math.log2(i + 2))
    return dcg / idcg
