"""A proportion with its Wilson score interval (Django-free).

For ``k`` successes in ``n`` trials, ``p = k/n`` and the Wilson interval at normal
quantile ``z`` is::

    centre = (p + z²/2n) / (1 + z²/n)
    half   = z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²)

Unlike the Wald interval it stays inside [0, 1] and keeps close to its nominal cover
for small ``n`` and ``p`` near 0 or 1 (Brown, Cai & DasGupta 2001), which is where an
assessor checked on a few dozen known answers sits.
"""

from __future__ import annotations

import math
from typing import NamedTuple

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
    p = k / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return Proportion(k, n, p, max(0.0, centre - half), min(1.0, centre + half))
