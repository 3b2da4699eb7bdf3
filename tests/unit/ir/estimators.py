"""Estimator values the ir tests use beside the product's REPORTED and PLAIN."""

from __future__ import annotations

from nuggets_app.ir.estimator import Estimator

# The difference estimator on λ p: tuned, unbounded, no ratio correction, linearised.
TUNED = Estimator(bounded=False, beale=None, interval="linearised")
# The same, bounded to [0, 1] with R̂ floored (statAP bounded at p ≡ 0).
BOUNDED = Estimator(beale=None, interval="linearised")
