"""A proportion with its Wilson score interval, and a mean of proportions over a few
clusters (topics) with a Wilson-type interval (Django-free).

For ``k`` successes in ``n`` trials, ``p = k/n`` and the Wilson interval at normal
quantile ``z`` is::

    centre = (p + z²/2n) / (1 + z²/n)
    half   = z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²)

Unlike the Wald interval it stays inside [0, 1] and keeps close to its nominal cover
for small ``n`` and ``p`` near 0 or 1 (Brown, Cai & DasGupta 2001), which is where an
assessor checked on a few dozen known answers sits.

A **mean of per-topic proportions** (an answer's nugget recall averaged over topics,
each topic a cluster of nuggets) gets :func:`mean_proportion_interval`: the Wilson
interval at an effective number of trials ``n_eff`` (Korn & Graubard 1998):

- ``p̂`` the mean of the ``n`` values, ``v̂ = s²/n`` its estimated variance (``s²``
  the values' sample variance), ``d = (z / t₀.₉₇₅,ₙ₋₁)²`` the degrees-of-freedom
  correction for the few topics that estimate ``v̂``;
- ``n_eff = max(n, d · p̂(1 - p̂) / v̂)`` where the topics differ, else ``n``.

The floor ``n`` is the small-n guard: a value in [0, 1] with mean μ has variance at
most μ(1 - μ) (Bhatia & Davis 2000), so the mean of ``n`` topics has variance at most
μ(1 - μ)/n and the Wilson interval at ``n`` (every topic a single trial) is wide
enough whatever the topics' spread. Where the topics all agree (all 0, say) their
spread says nothing, and that bound alone decides: an all-zero system on 2 topics
gets [0, 0.66], not [0, 0]. Where they spread less than the bound, ``v̂`` narrows
the interval, with ``d`` paying for estimating it from few topics. The interval
lies in [0, 1] and contains ``p̂``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from scipy import stats

Z95 = 1.959963984540054


class Proportion(NamedTuple):
    k: int
    n: int
    p: float
    low: float
    high: float


def wilson_interval(k: int, n: int, z: float = Z95) -> Proportion:
    """``k`` of ``n`` with its Wilson interval; NaNs when ``n`` is 0."""
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return Proportion(0, 0, math.nan, math.nan, math.nan)
    low, high = wilson_bounds(k / n, n, z)
    return Proportion(k, n, k / n, low, high)


def wilson_bounds(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson interval of a proportion ``p`` observed on ``n`` trials (``n`` may
    be an effective, non-integer number > 0): the ``μ`` with
    ``(p - μ)² <= z² μ(1 - μ) / n``, clamped to [0, 1] and to contain ``p`` against
    rounding."""
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z / denom * math.sqrt(max(0.0, p * (1 - p)) / n + z2 / (4 * n * n))
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


class MeanProportion(NamedTuple):
    """A mean of ``n`` proportions with its interval and the effective number of
    trials the interval was computed at."""

    mean: float
    low: float
    high: float
    n: int
    n_eff: float


def mean_proportion_interval(
    values: Sequence[float], confidence: float = 0.95
) -> MeanProportion:
    """The mean of per-topic proportions (each in [0, 1]) with its Wilson-type
    interval over topics as clusters (module docstring); NaNs without a value."""
    n = len(values)
    if n == 0:
        return MeanProportion(math.nan, math.nan, math.nan, 0, math.nan)
    if any(not 0.0 <= v <= 1.0 for v in values):
        raise ValueError("every value must be a proportion in [0, 1]")
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    p = min(1.0, max(0.0, math.fsum(values) / n))
    n_eff = float(n)
    # Values equal but for rounding (their mean a last bit off) do not differ.
    differ = max(values) - min(values) > 1e-12
    if n >= 2 and 0.0 < p < 1.0 and differ:
        var = math.fsum((v - p) ** 2 for v in values) / (n - 1) / n
        if var > 0:
            t = float(stats.t.ppf(0.5 + confidence / 2, n - 1))
            n_eff = max(n_eff, (z / t) ** 2 * p * (1 - p) / var)
    low, high = wilson_bounds(p, n_eff, z)
    return MeanProportion(p, low, high, n, n_eff)
