"""Inter-assessor agreement: percent agreement, Cohen's kappa, nugget span overlap.

Django-free. Labels are any hashable values (relevance grades); spans are half-open
character intervals ``[start, end)`` into one document's canonical text.

Cohen's kappa for two raters over the same n items::

    p_o = (1/n) * #{i : a_i == b_i}
    p_e = sum over labels c of (n_a(c) / n) * (n_b(c) / n)
    kappa = (p_o - p_e) / (1 - p_e)

kappa is undefined when ``p_e == 1`` (both raters used one and the same label for every
item); it is reported as NaN then.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import NamedTuple

from nuggets_app.ir.spans import Span, covered_chars, intersect_chars


def _check_pairs(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    if len(a) != len(b):
        raise ValueError(f"label lists differ in length: {len(a)} != {len(b)}")
    return len(a)


def percent_agreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Share of items given the same label by both raters; NaN for no items."""
    n = _check_pairs(a, b)
    if n == 0:
        return math.nan
    return sum(1 for x, y in zip(a, b, strict=True) if x == y) / n


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa of two raters' labels (formula in the module docstring)."""
    n = _check_pairs(a, b)
    if n == 0:
        return math.nan
    p_o = percent_agreement(a, b)
    count_a, count_b = Counter(a), Counter(b)
    p_e = sum(count_a[c] * count_b[c] for c in count_a) / (n * n)
    if math.isclose(p_e, 1.0):
        return math.nan
    return (p_o - p_e) / (1.0 - p_e)


class SpanOverlap(NamedTuple):
    """Character overlap of two assessors' nugget spans.

    ``jaccard`` = |A and B| / |A or B|; ``dice`` = 2|A and B| / (|A| + |B|); both NaN when
    neither assessor highlighted anything.
    """

    a_chars: int
    b_chars: int
    both_chars: int
    union_chars: int
    jaccard: float
    dice: float


def span_overlap(a: Iterable[Span], b: Iterable[Span]) -> SpanOverlap:
    """Overlap of two span sets over one document."""
    a, b = list(a), list(b)
    return overlap_from_counts(
        covered_chars(a), covered_chars(b), intersect_chars(a, b)
    )


def overlap_from_counts(a_chars: int, b_chars: int, both_chars: int) -> SpanOverlap:
    """A ``SpanOverlap`` from character counts (sum them over documents to micro-
    average a topic)."""
    union = a_chars + b_chars - both_chars
    jaccard = both_chars / union if union else math.nan
    dice = 2 * both_chars / (a_chars + b_chars) if a_chars + b_chars else math.nan
    return SpanOverlap(a_chars, b_chars, both_chars, union, jaccard, dice)
