"""Design-based estimates from the people's sample: totals, smooth functions of totals,
their linearised variance, and R with an automatic judge as auxiliary.

The people's sample of a topic's pool P is a fixed-size, high-entropy design (statAP
stops at ``n`` distinct documents; the uniform design takes ``n``) with first-order
inclusion probabilities π. Pairs with π = 1 are judged with certainty.

* Horvitz-Thompson total of ``z``: ``t̂ = Σ_S z/π``, unbiased.
* A smooth function ``θ = f(t_1, ..., t_k)`` of totals (a ratio, Cohen's kappa) is
  estimated by ``f(t̂)``; its linearised variable is ``u_d = Σ_k ∂f/∂t_k z_{dk}``
  (Taylor linearisation, Särndal, Swensson & Wretman 1992, §5.5) and
  ``V(f(t̂)) ≈ V(Σ_S u/π)``.
* Variance of a HT total of ``u`` for a fixed-size design of ``n`` documents with
  π < 1 in one topic (Hájek's approximation: Hájek 1964; Berger 2004):
  ``V̂ = n/(n-1) Σ_S (1 - π)(u/π - Â)²``, ``Â = Σ_S (1 - π) u/π / Σ_S (1 - π)``.
  For the uniform design (π = n/N) it is exactly the unbiased ``N²(1 - f) s²_u / n``.
  Topics are drawn independently, so variances add over topics. A topic with a
  single uncertain document falls back to the Poisson form ``Σ_S (1 - π)/π² u²``
  (the one model_assisted uses); certainty pairs add nothing.
* R with the judge (:func:`topic_r`): the difference estimator
  ``R̂ = Σ_P b p + Σ_S (y - b p)/π`` with ``p`` the judge's grade mapped to
  P̂(relevant | grade), known for every pooled pair. ``p`` is cross-fitted
  (:func:`crossfit_probabilities`: fitted on the other topics' samples, which are
  drawn independently of this topic's), so for a fixed ``b`` the estimator is
  design-unbiased whatever the judge. Its variance is ``V_HT(y - b p)``, so
  ``V(b) = V_opt + c (b - B)²`` with ``B`` the variance-minimising slope: any error in
  ``b`` costs in proportion to its square. ``b`` is one slope pooled over topics and
  shrunk toward 0 by its sampling error (:func:`pooled_slope`), so a judge that
  predicts nothing gives HT's estimate. (Slopes per topic shrunk toward the pooled
  one by empirical Bayes were measured worse: with 10-40 sampled pairs a topic's
  slope is too noisy and its variance under-estimated.)

No Django here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import t as student_t

from nuggets_app.ir.intervals import THIN_BELOW

Z_95 = 1.959963984540054
# Distinct judge grades up to which P(relevant | grade) is reported per grade.
MAX_DISTINCT_GRADES = 10
GRADE_BINS = 5  # quantile bins of the judge's scores beyond that
Array = NDArray[np.float64]


@dataclass(frozen=True)
class Design:
    """The pooled pairs as arrays: topic index, π, sampled mask (grade known)."""

    topic: NDArray[np.int64]
    pi: Array
    sampled: NDArray[np.bool_]
    n_topics: int

    @property
    def weight(self) -> Array:
        """``1/π`` on sampled pairs, 0 elsewhere."""
        return np.where(self.sampled, 1.0 / self.pi, 0.0)

    def total(self, z: Array) -> Array:
        """HT totals of the columns of ``z`` (pairs x k), or of a vector."""
        w = self.weight
        return np.asarray(w @ z, dtype=np.float64)

    def subset(self, mask: NDArray[np.bool_]) -> Design:
        return Design(
            self.topic[mask], self.pi[mask], self.sampled[mask], self.n_topics
        )


def _contributions(design: Design, u: Array) -> Array:
    """Each uncertain sampled pair's term of Hájek's variance of ``Σ_S u/π``."""
    uncertain = design.sampled & (design.pi < 1.0)
    topic = design.topic[uncertain]
    pi = design.pi[uncertain]
    x = u[uncertain] / pi
    c = 1.0 - pi
    k = design.n_topics
    n = np.bincount(topic, minlength=k).astype(np.float64)
    c_sum = np.bincount(topic, weights=c, minlength=k)
    a = np.bincount(topic, weights=c * x, minlength=k) / np.where(c_sum > 0, c_sum, 1)
    factor = np.where(n > 1, n / np.maximum(n - 1, 1), 0.0)[topic]
    hajek = factor * c * (x - a[topic]) ** 2
    return np.asarray(np.where(n[topic] > 1, hajek, c * x * x), dtype=np.float64)


def ht_variance(design: Design, u: Array) -> float:
    """Hájek's fixed-size variance of ``Σ_S u/π``, summed over topics."""
    return float(_contributions(design, u).sum())


def effective_df(terms: Array) -> float:
    """Satterthwaite's degrees of freedom of a variance that is a sum of terms each
    worth one degree, ``(Σ d)² / Σ d²``: the number of pairs that carry it (inf when
    it is 0). A ratio whose variance rests on a handful of sampled pairs (a judge
    that calls few pairs relevant) gets a Student-t quantile instead of 1.96."""
    total = float(terms.sum())
    squares = float(np.sum(terms * terms))
    return total * total / squares if squares > 0 else math.inf


def linearised(
    design: Design,
    z: Array,
    f: Callable[[Array], float],
    grad: Callable[[Array], Array],
) -> tuple[float, float, float]:
    """``(f(t̂), V̂, df)`` for a smooth function of the HT totals of ``z``'s
    columns."""
    t = design.total(z)
    value = f(t)
    if not np.isfinite(value):
        return float("nan"), float("nan"), math.inf
    terms = _contributions(design, z @ grad(t))
    return value, float(terms.sum()), effective_df(terms)


def ratio(t: Array) -> float:
    return float(t[0] / t[1]) if t[1] > 0 else float("nan")


def ratio_grad(t: Array) -> Array:
    return np.array([1.0 / t[1], -t[0] / (t[1] * t[1])])


def kappa(t: Array) -> float:
    """Cohen's kappa of the 2x2 table ``(a, b, c, d)`` = (both relevant, judge only,
    people only, neither): ``2(ad - bc) / ((a+b)(b+d) + (a+c)(c+d))``."""
    a, b, c, d = t
    den = (a + b) * (b + d) + (a + c) * (c + d)
    return float(2 * (a * d - b * c) / den) if den > 0 else float("nan")


def kappa_grad(t: Array) -> Array:
    a, b, c, d = t
    num = 2 * (a * d - b * c)
    den = (a + b) * (b + d) + (a + c) * (c + d)
    d_num = np.array([2 * d, -2 * c, -2 * b, 2 * a])
    d_den = np.array(
        [(b + d) + (c + d), (b + d) + (a + b), (c + d) + (a + c), (a + b) + (a + c)]
    )
    return np.asarray((d_num * den - num * d_den) / (den * den), dtype=np.float64)


def crossfit_probabilities(design: Design, y: Array, bins: NDArray[np.int64]) -> Array:
    """P̂(relevant | bin) for every pair, fitted on the other topics' samples: the HT
    ratio ``Σ y/π / Σ 1/π`` over the sampled pairs of its judge-grade bin in every
    topic but its own (a bin they never sampled takes their overall ratio; with a
    single topic, its own sample). Topics are drawn independently, so a topic's
    auxiliary does not depend on its own sample."""
    k = design.n_topics
    nb = int(bins.max()) + 1 if bins.size else 1
    w = design.weight
    cell = design.topic * nb + bins
    num = np.bincount(cell, weights=w * y, minlength=k * nb).reshape(k, nb)
    den = np.bincount(cell, weights=w, minlength=k * nb).reshape(k, nb)
    if k > 1:
        num, den = num.sum(axis=0) - num, den.sum(axis=0) - den
    num_all, den_all = num.sum(axis=1), den.sum(axis=1)
    overall = np.where(den_all > 0, num_all / np.where(den_all > 0, den_all, 1), 0.0)
    per_bin = np.where(den > 0, num / np.where(den > 0, den, 1.0), overall[:, None])
    return np.asarray(per_bin[design.topic, bins], dtype=np.float64)


def _centred(design: Design, y: Array, p: Array) -> list[tuple[Array, Array, Array]]:
    """Per topic with two or more uncertain sampled pairs: ``(c, x̃, z̃)``, the
    weights ``c = 1 - π`` and ``x = p/π``, ``z = y/π`` centred on their c-weighted
    means (the regression whose slope minimises Hájek's variance of the residual)."""
    uncertain = design.sampled & (design.pi < 1.0)
    out = []
    for t in np.unique(design.topic[uncertain]):
        m = uncertain & (design.topic == t)
        if m.sum() < 2:
            continue
        c = 1.0 - design.pi[m]
        x, z = p[m] / design.pi[m], y[m] / design.pi[m]
        out.append((c, x - np.average(x, weights=c), z - np.average(z, weights=c)))
    return out


def pooled_slope(design: Design, y: Array, p: Array) -> float:
    """One slope for every topic, shrunk toward 0 by its own sampling error.

    ``B̂ = Σ_t Σ c x̃ z̃ / Σ_t Σ c x̃²`` (the within-topic regression pooled over
    topics), with the sandwich variance ``v = Σ (c x̃ ê)² / (Σ c x̃²)²``. The excess
    variance of R̂ over the best slope is proportional to ``(b - B)²``; among
    ``b = λ B̂`` the expected excess is least at ``λ = B²/(B² + v)``, estimated by
    ``max(0, 1 - v/B̂²)``: a judge whose slope is lost in its noise gets ``b`` ≈ 0,
    i.e. HT's estimate.
    """
    topics = _centred(design, y, p)
    sxx = math.fsum(float(np.sum(c * xc * xc)) for c, xc, _ in topics)
    if not sxx > 1e-12:
        return 0.0
    slope = math.fsum(float(np.sum(c * xc * zc)) for c, xc, zc in topics) / sxx
    if slope == 0.0:
        return 0.0
    meat = math.fsum(
        float(np.sum((c * xc * (zc - slope * xc)) ** 2)) for c, xc, zc in topics
    )
    var = meat / (sxx * sxx)
    return slope * max(0.0, 1.0 - var / (slope * slope))


def topic_r(
    design: Design, y: Array, aux: Array, slope: float, floor_probs: Array
) -> tuple[Array, Array]:
    """Per topic, ``(R̂, V̂)`` of ``Σ_P b p + Σ_S (y - b p)/π`` (``slope`` 0: HT).

    Where the topic's sample holds fewer than ``THIN_BELOW`` relevant pairs its
    variance is at least the one anticipated over the pool,
    ``Σ_P (1 - π)/π q(1 - q)`` with ``q`` = ``floor_probs`` (as the product's
    ``sparse`` interval does): a sample that missed the relevant pairs shows no
    residual, not no uncertainty.
    """
    k = design.n_topics
    known = np.bincount(design.topic, weights=slope * aux, minlength=k)
    resid = y - slope * aux
    est = known + np.bincount(design.topic, weights=design.weight * resid, minlength=k)
    var = np.array(
        [ht_variance(design, np.where(design.topic == t, resid, 0.0)) for t in range(k)]
    )
    q = np.clip(floor_probs, 0.0, 1.0)
    antic = np.bincount(
        design.topic, weights=(1 - design.pi) / design.pi * q * (1 - q), minlength=k
    )
    relevant = np.bincount(design.topic, weights=design.sampled * y, minlength=k)
    var = np.where(relevant < THIN_BELOW, np.maximum(var, antic), var)
    return np.asarray(est, dtype=np.float64), np.asarray(var, dtype=np.float64)


def interval(
    value: float, var: float, low: float, high: float, df: float = math.inf
) -> tuple[float, float]:
    """``value ± q sqrt(var)`` clipped to ``[low, high]``, ``q`` the 97.5% quantile
    of Student's t with ``df`` degrees of freedom (1.96 for ``df = inf``)."""
    if not (np.isfinite(value) and np.isfinite(var)):
        return float("nan"), float("nan")
    q = Z_95 if not math.isfinite(df) else float(student_t.ppf(0.975, max(df, 1.0)))
    half = q * float(np.sqrt(max(var, 0.0)))
    return max(low, value - half), min(high, value + half)


def proportion_interval(
    value: float, var: float, df: float, boundary_n: float
) -> tuple[float, float]:
    """Wilson's score interval of a proportion estimated from a complex sample, at
    the effective sample size ``n* = p(1 - p)/V̂`` (Korn & Graubard 1998), with the
    Student-t quantile of ``df``. At ``p`` = 0 or 1 the linearised variance is 0
    whatever the sample; ``n*`` is then ``boundary_n`` (the uncertain sampled pairs
    of the proportion's denominator over 1 - their mean π; inf: the proportion is
    known). The interval always holds ``p`` and stays in [0, 1]; for large ``n*`` it
    is the Wald interval."""
    if not (np.isfinite(value) and np.isfinite(var)):
        return float("nan"), float("nan")
    spread = value * (1.0 - value)
    n = boundary_n
    if spread > 0:
        n = spread / var if var > 0 else math.inf
    if math.isinf(n):
        return value, value
    q = Z_95 if not math.isfinite(df) else float(student_t.ppf(0.975, max(df, 1.0)))
    q2n = q * q / n
    centre = (value + q2n / 2) / (1 + q2n)
    half = q / (1 + q2n) * math.sqrt(spread / n + q2n / (4 * n))
    # Wilson's interval holds p; min/max only absorb rounding at p = 0 or 1.
    return min(value, max(0.0, centre - half)), max(value, min(1.0, centre + half))


def grade_bins(grades: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """Each pair's judge-grade bin and the bins' lowest grades (the keys of
    P(relevant | grade)); pairs with no grade get a bin of their own, unkeyed."""
    known = grades[~np.isnan(grades)]
    distinct = np.unique(known)
    if distinct.size <= MAX_DISTINCT_GRADES:
        edges = distinct[1:]
    else:
        qs = np.quantile(known, np.arange(1, GRADE_BINS) / GRADE_BINS)
        edges = np.unique(qs[qs > distinct[0]])
    bins = np.searchsorted(edges, np.nan_to_num(grades, nan=-np.inf), side="right")
    keys = [float(distinct[0]), *map(float, edges)] if distinct.size else []
    bins = np.where(np.isnan(grades), len(keys), bins).astype(np.int64)
    return bins, keys


def size_needed(var: float, n: int, big_n: int, half: float) -> int:
    """The uniform design's ``n'`` with ``1.96² N²(1/n' - 1/N) S² <= half²``, with
    ``N² S² = V̂ / (1/n - 1/N)`` from the sample of ``n`` of ``N`` uncertain pairs."""
    if n >= big_n or not var > 0:
        return n
    if n == 0 or not half > 0:
        return big_n
    scaled = var / (1.0 / n - 1.0 / big_n)
    exact = 1.0 / ((half / Z_95) ** 2 / scaled + 1.0 / big_n)
    return min(big_n, max(1, math.ceil(exact - 1e-9)))
