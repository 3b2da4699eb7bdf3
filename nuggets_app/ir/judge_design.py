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
  π < 1 in one topic (Hájek's approximation, Särndal et al. eq. 3.7.x; Berger 2004):
  ``V̂ = n/(n-1) Σ_S (1 - π)(u/π - Â)²``, ``Â = Σ_S (1 - π) u/π / Σ_S (1 - π)``.
  For the uniform design (π = n/N) it is exactly the unbiased ``N²(1 - f) s²_u / n``.
  Topics are drawn independently, so variances add over topics. A topic with a
  single uncertain document falls back to the Poisson form ``Σ_S (1 - π)/π² u²``
  (the one model_assisted uses); certainty pairs add nothing.
* R with the judge (:func:`greg_r`): the difference estimator
  ``R̂ = Σ_P b p + Σ_S (y - b p)/π`` with ``p`` the judge's grade mapped to
  P̂(relevant | grade), known for every pooled pair, and ``b`` the topic's slope.
  Its variance is ``V_HT(y - b p)``, so ``V(b) = V_opt + c (b - B)²`` with ``B`` the
  variance-minimising slope: any error in ``b`` costs in proportion to its square.
  ``b`` is therefore the empirical-Bayes (posterior-mean) estimate of ``B``: the
  topic's own regression slope shrunk toward the slope pooled over topics by its
  sampling variance against the spread of the slopes between topics, which minimises
  the expected squared error of ``b`` and so the expected excess variance. A judge
  that predicts nothing has ``B`` ≈ 0 and ``S²_p`` ≈ 0: the estimator is then HT's.

No Django here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Z_95 = 1.959963984540054
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


def ht_variance(design: Design, u: Array) -> float:
    """Hájek's fixed-size variance of ``Σ_S u/π``, summed over topics."""
    uncertain = design.sampled & (design.pi < 1.0)
    if not uncertain.any():
        return 0.0
    topic = design.topic[uncertain]
    pi = design.pi[uncertain]
    x = u[uncertain] / pi
    c = 1.0 - pi
    k = design.n_topics
    n = np.bincount(topic, minlength=k).astype(np.float64)
    c_sum = np.bincount(topic, weights=c, minlength=k)
    a = np.bincount(topic, weights=c * x, minlength=k) / np.where(c_sum > 0, c_sum, 1)
    dev = np.bincount(topic, weights=c * (x - a[topic]) ** 2, minlength=k)
    poisson = np.bincount(topic, weights=c * x * x, minlength=k)
    factor = np.where(n > 1, n / np.maximum(n - 1, 1), 0.0)
    per_topic = np.where(n > 1, factor * dev, poisson)
    return float(per_topic.sum())


def linearised(
    design: Design,
    z: Array,
    f: Callable[[Array], float],
    grad: Callable[[Array], Array],
) -> tuple[float, float]:
    """``(f(t̂), V̂)`` for a smooth function of the HT totals of ``z``'s columns."""
    t = design.total(z)
    value = f(t)
    if not np.isfinite(value):
        return float("nan"), float("nan")
    u = z @ grad(t)
    return value, ht_variance(design, u)


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


def _slopes(design: Design, y: Array, p: Array) -> tuple[Array, Array, Array]:
    """Per topic: the slope of ``y/π`` on ``p/π`` weighted by ``1 - π`` (the slope
    minimising Hájek's variance of the residual), its sandwich variance, and the
    weighted sum of squares of ``p/π`` (0: no slope to fit)."""
    k = design.n_topics
    slope = np.zeros(k)
    var = np.full(k, np.inf)
    sxx = np.zeros(k)
    uncertain = design.sampled & (design.pi < 1.0)
    for t in range(k):
        m = uncertain & (design.topic == t)
        if m.sum() < 3:
            continue
        c = 1.0 - design.pi[m]
        x = p[m] / design.pi[m]
        z = y[m] / design.pi[m]
        xc = x - np.average(x, weights=c)
        zc = z - np.average(z, weights=c)
        sxx[t] = float(np.sum(c * xc * xc))
        if sxx[t] <= 1e-12 * max(1.0, float(np.sum(c * x * x))):
            sxx[t] = 0.0
            continue
        slope[t] = float(np.sum(c * xc * zc)) / sxx[t]
        resid = zc - slope[t] * xc
        n = m.sum()
        var[t] = n / (n - 2) * float(np.sum((c * xc * resid) ** 2)) / sxx[t] ** 2
    return slope, var, sxx


def shrunk_slopes(design: Design, y: Array, p: Array) -> Array:
    """Each topic's slope: its own, shrunk toward the pooled one by empirical Bayes.

    ``b_t = B + τ²/(τ² + v_t) (b̂_t - B)``, with ``B`` the pooled within-topic slope
    and ``τ² = max(0, mean_t((b̂_t - B)² - v_t))`` the spread of the true slopes
    between topics (method of moments). A topic with no slope of its own takes ``B``.
    """
    slope, var, sxx = _slopes(design, y, p)
    fitted = sxx > 0
    if not fitted.any():
        return np.zeros(design.n_topics)
    pooled = float(np.sum(sxx[fitted] * slope[fitted]) / np.sum(sxx[fitted]))
    spread = (slope[fitted] - pooled) ** 2 - var[fitted]
    tau2 = max(0.0, float(np.mean(spread)))
    keep = np.where(fitted, tau2 / (tau2 + np.where(fitted, var, 1.0)), 0.0)
    return np.asarray(pooled + keep * (slope - pooled), dtype=np.float64)


def grade_probabilities(design: Design, y: Array, bins: NDArray[np.int64]) -> Array:
    """P̂(relevant | bin) for every pair: the HT ratio within its judge-grade bin
    over all topics' samples; a bin nobody sampled takes the overall ratio."""
    w = design.weight
    nb = int(bins.max()) + 1 if bins.size else 0
    num = np.bincount(bins, weights=w * y, minlength=nb)
    den = np.bincount(bins, weights=w, minlength=nb)
    overall = float(np.sum(w * y) / np.sum(w)) if np.sum(w) > 0 else 0.0
    per_bin = np.where(den > 0, num / np.where(den > 0, den, 1.0), overall)
    return np.asarray(per_bin[bins], dtype=np.float64)


def topic_r(design: Design, y: Array, aux: Array, slope: Array) -> tuple[Array, Array]:
    """Per topic, ``(R̂, V̂)`` of ``Σ_P b p + Σ_S (y - b p)/π`` (``slope`` 0: HT)."""
    k = design.n_topics
    b = slope[design.topic]
    known = np.bincount(design.topic, weights=b * aux, minlength=k)
    resid = y - b * aux
    w = design.weight
    est = known + np.bincount(design.topic, weights=w * resid, minlength=k)
    var = np.array(
        [ht_variance(design, np.where(design.topic == t, resid, 0.0)) for t in range(k)]
    )
    return est, var


def interval(value: float, var: float, low: float, high: float) -> tuple[float, float]:
    """``value ± 1.96 sqrt(var)`` clipped to ``[low, high]``."""
    if not (np.isfinite(value) and np.isfinite(var)):
        return float("nan"), float("nan")
    half = Z_95 * float(np.sqrt(max(var, 0.0)))
    return max(low, value - half), min(high, value + half)
