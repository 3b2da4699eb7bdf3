"""The model-assisted estimator as a value: its options, named and passed whole.

An :class:`Estimator` holds what decides a model-assisted figure beside its inputs
(sample, p, runs): how a topic's p is tuned, whether per-topic values are bounded to
[0, 1], where Beale's ratio correction of AP applies, and which variance gives the
interval. :data:`REPORTED` is the one the application reports, and
``Estimator()`` equals it: every function that estimates takes
``estimator: Estimator = REPORTED``, so calling it with its defaults gives what the
pages, commands and exports show, as ``AP(rel=2)@10`` is a value that ir_measures'
``calc_aggregate`` takes whole. :data:`PLAIN` is the difference estimator as its
derivation states it (p as given, unbounded, no ratio correction, the linearised
variance): with p ≡ 0 it is statAP, the bias check's reference. A variant under study
is another value, made in the lab (``dataclasses.replace(REPORTED, ...)``), never a
change to this package. Derivations: docs/explanation/model-assisted.md. No Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from nuggets_app.ir.beale import BealeRule, beale_span
from nuggets_app.ir.intervals import interval_check
from nuggets_app.ir.prels import TopicPrels


class Tuning(Protocol):
    """A topic's scale ``λ`` of the model's p (the estimate uses ``λ p``)."""

    def __call__(
        self, judged: TopicPrels, probs: Mapping[str, float], *, level: int
    ) -> float: ...


def power_tuning(
    judged: TopicPrels, probs: Mapping[str, float], *, level: int = 1
) -> float:
    """The topic's ``λ`` in [1/2, 1]: the model's p is used as ``λ p``.

    ``λ̂ = Σ_S v y p / Σ_S v p²`` (``v = (1 - π)/π²`` or the sample's variance
    factor; clipped to [0, 1]) minimises the estimated variance of ``R̂`` (GREG's
    regression coefficient; PPI++'s power tuning); ``λ = (1 + λ̂)/2``, half-way to a
    calibrated model's 1, since λ̂ alone also shrinks the variance estimate it was
    chosen to minimise (docs/explanation/model-assisted.md). 1 when the sample says
    nothing (no sampled document with ``p > 0`` and ``π < 1``).
    """
    num = den = 0.0
    for docno, rel in judged.rel.items():
        pi = judged.inclusion_prob[docno]
        p = probs.get(docno, 0.0)
        if 0 < pi < 1 and p > 0:
            v = judged.var_weight.get(docno, (1.0 - pi) / (pi * pi))
            num += v * p * float(rel >= level)
            den += v * p * p
    if den <= 0:
        return 1.0
    return (1.0 + min(max(num / den, 0.0), 1.0)) / 2


@dataclass(frozen=True)
class Estimator:
    """The model-assisted estimator with its options; the defaults are
    :data:`REPORTED`.

    * ``tuning``: each topic's p is scaled by its ``λ`` (:func:`power_tuning`); None:
      p as given, and the estimates are exactly unbiased for that p.
    * ``bounded``: per topic, AP, R-prec, P@k and nDCG@k clipped to [0, 1] with their
      variance capped at 1/4 (Popoviciu), R̂ floored at the relevant documents judged,
      and a run's interval of every measure but R intersected with [0, 1]: the truth
      lies inside both ranges.
    * ``beale``: where AP is Beale's ratio estimator (:mod:`nuggets_app.ir.beale`);
      None: nowhere, statAP's ratio N̂/R̂.
    * ``interval``: the variance of :mod:`nuggets_app.ir.intervals`.
    """

    tuning: Tuning | None = power_tuning
    bounded: bool = True
    beale: BealeRule | None = beale_span
    interval: str = "sparse"

    def __post_init__(self) -> None:
        interval_check(self.interval)


# What the application reports: tuned p, bounded, Beale's span, the sparse interval.
REPORTED = Estimator()
# The plain difference estimator; with p ≡ 0, statAP with its linearised variance.
PLAIN = Estimator(tuning=None, bounded=False, beale=None, interval="linearised")
