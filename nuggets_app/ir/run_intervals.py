"""A measure's estimate per topic with its variance, and a run's mean over topics
with its 95% interval: what the estimators of this package return.

``bounded`` estimates (:func:`topic_bounded`, :func:`bounded_ci`) keep every measure
but R in [0, 1], where the truth lies. An estimate may carry a second value its
interval also spans (``TopicEstimate.other``: AP without Beale's ratio correction
where R̂ was floored, :mod:`nuggets_app.ir.beale`); a run's interval then spans its
mean with those values too (:func:`run_other`). No Django here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

Z_95 = 1.96
NAN = float("nan")
# The largest variance of a [0, 1]-valued estimate (bounded=True).
BOUNDED_VAR = 0.25


@dataclass(frozen=True)
class TopicEstimate:
    """One measure of one run on one topic, with its variance (``model_only``: the
    topic's sample holds no relevant judged document; ``other``: a second estimate
    the interval spans as well: AP's uncorrected ratio on a floored topic under the
    reported Beale rule, :func:`nuggets_app.ir.beale.beale_span`)."""

    qid: str
    estimate: float
    var: float
    est_r: float
    model_only: bool = False
    other: float | None = None

    @property
    def ci95(self) -> tuple[float, float]:
        """``estimate ± 1.96 sqrt(var)``, widened to ``other ± 1.96 sqrt(var)``."""
        return spanned(self.estimate, self.other, self.var)


@dataclass(frozen=True)
class RunEstimate:
    """One measure of one run: mean over valid topics, ``var = Σ var_t / n²``."""

    name: str
    measure: str
    estimate: float
    var: float
    ci95: tuple[float, float]
    topics: tuple[TopicEstimate, ...]
    n_topics: int

    @property
    def n_model_only(self) -> int:
        """Topics whose sample holds no relevant judged document."""
        return sum(t.model_only for t in self.topics)


def interval95(estimate: float, var: float) -> tuple[float, float]:
    if not var >= 0:
        return (NAN, NAN)
    half = Z_95 * math.sqrt(var)
    return (estimate - half, estimate + half)


def spanned(estimate: float, other: float | None, var: float) -> tuple[float, float]:
    """The 95% interval of ``estimate``, widened to cover that of ``other`` (None:
    the plain interval)."""
    low, high = interval95(estimate, var)
    if other is None or math.isnan(other):
        return (low, high)
    other_low, other_high = interval95(other, var)
    return (min(low, other_low), max(high, other_high))


def topic_bounded(estimates: Mapping[str, TopicEstimate]) -> dict[str, TopicEstimate]:
    """Every measure but ``R`` clipped to [0, 1], its variance capped at
    :data:`BOUNDED_VAR` (NaN stays NaN)."""
    out = dict(estimates)
    for name, t in estimates.items():
        if name != "R" and not math.isnan(t.estimate):
            value, other = _clip(t.estimate), t.other
            out[name] = replace(
                t,
                estimate=value,
                var=min(t.var, BOUNDED_VAR),
                other=None if other is None else _clip(other),
            )
    return out


def _clip(value: float) -> float:
    return min(max(value, 0.0), 1.0)


def run_estimate(
    name: str, measure: str, topics: Sequence[TopicEstimate]
) -> RunEstimate:
    """Mean over the given (valid) topics; ``var = Σ var_t / n²``; NaN when empty.
    The interval also spans the mean with each topic's ``other`` estimate in place of
    its own, where a topic has one (:func:`run_other`)."""
    n = len(topics)
    if n == 0:
        return RunEstimate(name, measure, NAN, NAN, (NAN, NAN), (), 0)
    mean = math.fsum(t.estimate for t in topics) / n
    var = math.fsum(t.var for t in topics) / (n * n)
    ci = spanned(mean, run_other(topics), var)
    return RunEstimate(name, measure, mean, var, ci, tuple(topics), n)


def run_other(topics: Sequence[TopicEstimate]) -> float | None:
    """The run's mean with every topic's ``other`` estimate where it has one (None
    when no topic has)."""
    if all(t.other is None for t in topics):
        return None
    values = [t.estimate if t.other is None else t.other for t in topics]
    return math.fsum(values) / len(values)


def bounded_ci(estimate: RunEstimate) -> RunEstimate:
    """The interval of a bounded measure intersected with [0, 1] (the truth is
    inside; ``R`` is left alone)."""
    if estimate.measure == "R":
        return estimate
    low, high = estimate.ci95
    return replace(estimate, ci95=(max(low, 0.0), min(high, 1.0)))
