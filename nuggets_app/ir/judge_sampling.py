"""statAP's design steered by an automatic judge, with exact inclusion probabilities.

The people's sample stays a probability sample; the judge only reshapes the
distribution it is drawn from. For one topic's pool of ``N`` documents:

* statAP's distribution ``prior(d)`` (:func:`nuggets_app.ir.sampling.pool_distribution`,
  every value > 0);
* the judge's strength ``s(d)`` in [0, 1] (1: the judge calls it relevant for sure;
  0: not relevant, or no label at all), and its shape
  ``q(d) = (JUDGE_FLOOR + s(d)) / sum_e (JUDGE_FLOOR + s(e))`` (> 0 for every pooled
  document, labelled or not);
* the mixture ``p(d) = (1 - a) prior(d) + a q(d)`` with the judge's weight ``a`` in
  [0, 1] (``DEFAULT_JUDGE_WEIGHT``). ``a = 0`` is statAP's distribution itself.

The draw is statAP's with replacement, but with a number of draws ``K`` fixed before
drawing: the least ``K`` whose expected number of distinct documents
``E|S| = sum_d pi_K(d)`` reaches the size ``n`` asked (:func:`planned_draws`), at most
``100 N``. The ``K`` draws are independent, so a document is missed by all of them with
probability ``(1 - p(d))^K`` and

    pi(d) = 1 - (1 - p(d))^K,   exactly,

since ``K`` depends on ``p`` and ``n`` only, never on what was drawn (statAP's
distinct-count stopping makes ``K`` random and its ``pi`` an approximation). The number
of distinct documents is random, ``n`` on average (``E|S| = sum_d pi(d)`` because
``|S| = sum_d 1[d in S]``). ``n >= N`` judges the whole pool (``pi = 1``).

Why the estimators stay unbiased. Horvitz-Thompson's ``R^ = sum_{d in S} y(d)/pi(d)``
has ``E R^ = sum_d pi(d) y(d)/pi(d) = R`` whenever every pooled ``pi(d) > 0`` and is
known exactly: both hold here for any judge, however wrong (``p(d) >= (1 - a)
prior(d) + a JUDGE_FLOOR / (N (1 + JUDGE_FLOOR)) > 0``). statAP's AP, the
model-assisted estimator and the judge audit weight by the same ``pi`` and keep their
properties; a bad judge costs variance, never bias.

Why it lowers variance. With ``K`` draws the Hansen-Hurwitz form of the estimator has
variance ``(1/K) sum_d p(d) (y(d)/p(d) - R)^2``, zero when ``p(d)`` is proportional to
``y(d)``: sampling with probability proportional to size. ``y`` is 0 or 1, so the ideal
``p`` puts its mass on the relevant documents. statAP's prior approximates that from the
runs' ranks; a judge that agrees with the people moves mass further toward the
relevant documents (``q`` grows with ``s``), and the floor and the prior's share keep
every document reachable, bounding the weights ``1/pi`` that a judge's misses get.

No Django here (import-linter enforces it).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping

from nuggets_app.ir.sampling import (
    SamplingError,
    StatapDraw,
    draw_statap,
    inclusion_probabilities,
)

# The judge's share of the sampling distribution unless staff choose another.
DEFAULT_JUDGE_WEIGHT = 0.5
# Every document's share of the judge's shape, added to its strength in [0, 1]: a
# document the judge calls not relevant (or did not label) keeps 1/21 of the weight of
# one it calls relevant.
JUDGE_FLOOR = 0.05
# Draws at most, per pooled document (as statAP's own budget).
MAX_DRAWS_PER_DOCUMENT = 100


def check_judge_weight(weight: float) -> None:
    """Refuse a judge's weight outside [0, 1]."""
    if not 0.0 <= weight <= 1.0:
        raise SamplingError(f"the judge's weight must lie in [0, 1], got {weight!r}")


def judge_shape(docnos: list[str], strength: Mapping[str, float]) -> dict[str, float]:
    """``q(d) = (JUDGE_FLOOR + s(d)) / sum``: ``s`` clipped to [0, 1], 0 when absent."""
    raw = {d: JUDGE_FLOOR + min(1.0, max(0.0, strength.get(d, 0.0))) for d in docnos}
    total = math.fsum(raw.values())
    return {d: value / total for d, value in raw.items()}


def judge_shaped_distribution(
    prior: Mapping[str, float], strength: Mapping[str, float], weight: float
) -> dict[str, float]:
    """``p(d) = (1 - a) prior(d) + a q(d)`` over the documents of ``prior``.

    ``strength`` may hold documents outside the pool (ignored) and miss some of the
    pool (strength 0). ``weight`` 0 returns ``prior`` unchanged.
    """
    check_judge_weight(weight)
    if not prior:
        raise SamplingError("the pool is empty")
    if weight == 0.0:
        return dict(prior)
    docnos = sorted(prior)
    q = judge_shape(docnos, strength)
    mixed = {d: (1.0 - weight) * prior[d] + weight * q[d] for d in docnos}
    # Renormalise: prior sums to 1 only up to rounding.
    total = math.fsum(mixed.values())
    return {d: value / total for d, value in mixed.items()}


def expected_distinct(p: Mapping[str, float], draws: int) -> float:
    """``E|S| = sum_d (1 - (1 - p(d))^K)`` for ``K = draws``."""
    return math.fsum(inclusion_probabilities(p, draws).values())


def planned_draws(p: Mapping[str, float], n: int) -> int:
    """The least ``K`` with ``E|S| >= n`` (``E|S|`` grows with ``K``), at most
    ``MAX_DRAWS_PER_DOCUMENT * N``. Depends on ``p`` and ``n`` only."""
    if n < 1:
        raise SamplingError(f"sample size must be at least 1, got {n}")
    cap = MAX_DRAWS_PER_DOCUMENT * len(p)
    if expected_distinct(p, cap) < n:
        return cap
    low, high = 1, cap  # E|S|(high) >= n; find the least such K by bisection
    while low < high:
        mid = (low + high) // 2
        if expected_distinct(p, mid) >= n:
            high = mid
        else:
            low = mid + 1
    return low


def draw_judge_shaped(
    prior: Mapping[str, float],
    strength: Mapping[str, float],
    n: int,
    rng: random.Random,
    weight: float = DEFAULT_JUDGE_WEIGHT,
) -> StatapDraw:
    """Draw ``K = planned_draws(p, n)`` times with replacement from the judge-shaped
    ``p``; ``pi`` exact. ``n >= N``: the whole pool, ``pi = 1``. Prefix-stable: a
    larger ``n`` repeats the draws of a smaller one and continues them."""
    p = judge_shaped_distribution(prior, strength, weight)
    if n >= len(p):
        return draw_statap(p, n, rng)  # the census
    return draw_statap(p, planned_draws(p, n), rng, stop="draws")
