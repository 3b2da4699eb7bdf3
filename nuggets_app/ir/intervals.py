"""Interval methods of the model-assisted estimate: which variance goes with it.

Derivation, comparison and the measured choice: docs/explanation/model-assisted.md,
"Intervals on sparse collections". The estimate is the same under every method; only
its variance (so its 95% interval) differs:

* ``linearised``: ``Σ_S (1 - π)/π² (a (y - p))²``, the Horvitz-Thompson estimate of
  the design variance from the drawn documents alone. Unbiased, but very skewed where
  relevant documents are rare: a sample that missed them shows no residual and a
  variance near 0.
* ``anticipated``: the larger of the linearised variance and the design variance the
  model anticipates over the whole pool, ``Σ_P (1 - π)/π a² p (1 - p)``: every pooled
  document, drawn or not, with its design's π (``design``), and ``(y - p)²`` replaced by
  its expectation under the model. A document the sample never drew still counts.
* ``model_only``: the linearised variance, but a topic whose sample holds no relevant
  judged document rests on the model alone: its bounded measures get the largest
  variance of a [0, 1]-valued estimate, 1/4 (Popoviciu's inequality).
* ``combined``: ``anticipated``, with ``model_only``'s bound on such topics.
* ``sparse``: ``combined`` where the sample is thin, the linearised variance elsewhere.
  A topic's sample is thin when it holds fewer than :data:`THIN_BELOW` (five) relevant
  judged documents: the linearised variance is then a sum of a few non-negligible
  terms, mostly too small, so the model's anticipation is its floor; with five or more
  it is used as it is. Five is measured: with three, single seeds of CACM and Cranfield
  covered 0.59 and 0.44 of the runs; with eight, DL19's intervals at 10% grew past 1.5
  times the linearised width (docs/results/intervals.md).

:func:`judgments_to_narrow` says how many judged documents a model-only topic would
need before its sample is likely to hold a relevant one. No Django here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from nuggets_app.errors import DomainError

INTERVALS = ("linearised", "anticipated", "model_only", "combined", "sparse")
# The largest variance of a [0, 1]-valued estimate (Popoviciu).
MODEL_ONLY_VAR = 0.25
# Expected relevant documents in a sample for P(none drawn) <= exp(-3) ~ 5%.
RELEVANT_WANTED = 3.0
# Relevant judged documents below which a topic's sample is thin (``sparse``).
THIN_BELOW = 5


class IntervalError(DomainError):
    """An unknown interval method; the message names it."""


def interval_check(interval: str) -> str:
    if interval not in INTERVALS:
        raise IntervalError(
            f"interval must be one of {', '.join(INTERVALS)}, got {interval!r}"
        )
    return interval


def uses_anticipated(interval: str, n_relevant: int) -> bool:
    """Does the method floor the variance at the model's anticipation on a topic whose
    sample holds ``n_relevant`` relevant judged documents?"""
    if interval == "sparse":
        return n_relevant < THIN_BELOW
    return interval in ("anticipated", "combined")


def uses_model_only_bound(interval: str) -> bool:
    return interval in ("model_only", "combined", "sparse")


def anticipated_vars(
    ranking: Sequence[str],
    y_hat: Sequence[float],
    probs: Mapping[str, float],
    design: Mapping[str, float],
    *,
    est_r: float,
    ap: float,
    cutoff: int,
    rp_rank: int,
) -> tuple[float, float, float]:
    """``(var AP, var R-prec, var P@k)`` anticipated by the model over the pool.

    ``ranking`` is the run's list with ``y_hat`` its difference estimates ŷ (same
    order); ``probs`` the (tuned) p; ``design`` the π of every pooled document, drawn
    or not. ``Σ_d (1 - π_d)/π_d a_d² p_d (1 - p_d)`` over documents with
    ``0 < π < 1``, with ``a_d`` each measure's derivative in ``y_d`` at the estimates
    (as the linearised variance uses): AP ``(ĉ_d + Σ_{r > r_d} ŷ/r - AP)/R̂`` on the
    list, ``-AP/R̂`` off it; P@k ``1/k`` in the top k; R-prec ``1/R̂r`` in the top
    ``R̂r`` (``rp_rank``; 0: the fallback ``SP̂/R̂``, ``(1 - Rp)/R̂`` on the list and
    ``-Rp/R̂`` off it).
    """
    if not est_r > 0:
        return math.nan, math.nan, math.nan
    r = est_r
    total = math.fsum(y / rank for rank, y in enumerate(y_hat, 1))
    rprec = math.fsum(y_hat) / r if not rp_rank else 0.0
    on_list: dict[str, tuple[float, float, float]] = {}
    sp = upto = 0.0
    for rank, (docno, y) in enumerate(zip(ranking, y_hat, strict=True), 1):
        c_hat = (1.0 + sp) / rank
        sp += y
        upto += y / rank
        a_ap = (c_hat + total - upto - ap) / r
        if rp_rank:
            a_rp = 1.0 / rp_rank if rank <= rp_rank else 0.0
        else:
            a_rp = (1.0 - rprec) / r
        on_list[docno] = (a_ap, a_rp, 1.0 / cutoff if rank <= cutoff else 0.0)
    off_list = (-ap / r, -rprec / r if not rp_rank else 0.0, 0.0)
    sums = [0.0, 0.0, 0.0]
    for docno, pi in design.items():
        if not 0.0 < pi < 1.0:
            continue
        p = min(max(probs.get(docno, 0.0), 0.0), 1.0)
        weight = (1.0 - pi) / pi * p * (1.0 - p)
        if weight <= 0:
            continue
        for i, a in enumerate(on_list.get(docno, off_list)):
            sums[i] += weight * a * a
    return sums[0], sums[1], sums[2]


def judgments_to_narrow(
    n_judged: int, expected_relevant: float, pool_size: int | None = None
) -> int | None:
    """Judged documents a topic needs (in all, this sample's design scaled up) before
    its sample likely holds a relevant one: ``ceil(3 n / Σ_S p)``.

    ``expected_relevant = Σ_S p``, the model's expected number of relevant documents
    in the sample drawn (``E[Σ_S p] = Σ_P π p``). With small π a sample ``c`` times
    larger multiplies it by about ``c``, and the chance of drawing no relevant
    document is about ``exp(-c Σ_S p)``: ``c = 3/Σ_S p`` brings it under 5%. Capped at
    ``pool_size`` (judge the whole pool); None when the model expects nothing.
    """
    if n_judged <= 0 or not expected_relevant > 0:
        return pool_size
    needed = math.ceil(RELEVANT_WANTED * n_judged / expected_relevant)
    needed = max(needed, n_judged + 1)
    return needed if pool_size is None else min(needed, pool_size)
