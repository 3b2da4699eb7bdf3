"""Score-distribution metrics DO and HSA (Krstovski, Smith & Kurtz, SIGIR 2015).

Specification: docs/reference/algorithms.md section 6. For the scores of judged relevant (R) and
judged non-relevant (NR) documents of one topic and ``B`` bins (default 10):

1. min-max normalise over R and NR together: ``x = (s - min)/(max - min)`` (all 0 if max == min);
2. bin ``b(x) = min(floor(x·B), B-1)``, counts ``hR[b]`` and ``hNR[b]``;
3. ``DO = Σ_{b: hR[b]>0, hNR[b]>0} ln(min(hR[b], hNR[b]))`` (more = more overlap);
4. ``HSA`` = least-squares slope of ``ln(hR[b]/hNR[b])`` on the bin centre
   ``(b + 0.5)/B`` over bins where both counts are positive; NaN with fewer than two
   such bins (more = relevant documents concentrate at high scores).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_BINS = 10


@dataclass(frozen=True)
class ScoreHistograms:
    """Bin counts of relevant and non-relevant scores over a common range."""

    bins: int
    low: float
    high: float
    relevant: tuple[int, ...]
    nonrelevant: tuple[int, ...]

    @property
    def edges(self) -> tuple[float, ...]:
        """The ``bins + 1`` bin edges in score units (for plots)."""
        width = (self.high - self.low) / self.bins
        return tuple(self.low + i * width for i in range(self.bins + 1))


def bin_index(x: float, bins: int) -> int:
    """Step 2: the bin of ``x`` in [0, 1] among ``bins`` equal bins, ``min(floor(x·B),
    B-1)`` (bin b holds b/B <= x < (b+1)/B; x = 1 falls in the last bin)."""
    return min(math.floor(x * bins), bins - 1)


def score_histograms(
    relevant: Sequence[float], nonrelevant: Sequence[float], *, bins: int = DEFAULT_BINS
) -> ScoreHistograms:
    """Steps 1-2: normalise over both sets together, then count per bin."""
    if bins < 1:
        raise ValueError("bins must be at least 1")
    everything = [*relevant, *nonrelevant]
    if not everything:
        return ScoreHistograms(bins, 0.0, 0.0, (0,) * bins, (0,) * bins)
    low, high = min(everything), max(everything)
    span = high - low

    def counts(scores: Sequence[float]) -> tuple[int, ...]:
        hist = [0] * bins
        for s in scores:
            x = (s - low) / span if span > 0 else 0.0
            hist[bin_index(x, bins)] += 1
        return tuple(hist)

    return ScoreHistograms(bins, low, high, counts(relevant), counts(nonrelevant))


def distributional_overlap(hist: ScoreHistograms) -> float:
    """DO: sum of ``ln(min(hR, hNR))`` over bins where both are non-empty."""
    return sum(
        math.log(min(r, n))
        for r, n in zip(hist.relevant, hist.nonrelevant, strict=True)
        if r > 0 and n > 0
    )


def histogram_slope(hist: ScoreHistograms) -> float:
    """HSA: least-squares slope of ``ln(hR/hNR)`` on the bin centres."""
    points = [
        ((b + 0.5) / hist.bins, math.log(r / n))
        for b, (r, n) in enumerate(zip(hist.relevant, hist.nonrelevant, strict=True))
        if r > 0 and n > 0
    ]
    if len(points) < 2:
        return math.nan
    mean_c = sum(c for c, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    numerator = sum((c - mean_c) * (y - mean_y) for c, y in points)
    denominator = sum((c - mean_c) ** 2 for c, _ in points)
    return numerator / denominator


def do_hsa(
    relevant: Sequence[float], nonrelevant: Sequence[float], *, bins: int = DEFAULT_BINS
) -> tuple[float, float, ScoreHistograms]:
    """DO, HSA and the histograms of one topic's scores."""
    hist = score_histograms(relevant, nonrelevant, bins=bins)
    return distributional_overlap(hist), histogram_slope(hist), hist
