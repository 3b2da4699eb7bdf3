"""Estimator variants under study: values of the product's
:class:`~nuggets_app.ir.estimator.Estimator`, never changes to the product.

Each variant was measured and not reported (docs/results/intervals.md, the
explanation's "Where Beale's expansion holds"); the product carries only
:data:`~nuggets_app.ir.estimator.REPORTED`. A variant is the reported value with one
field replaced: a Beale rule (:mod:`nuggets_app.ir.beale`), a tuning of p, a bound or
an interval method. :func:`estimator_parse` reads them from the studies' command
lines (``key:value,...``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from nuggets_app.ir.beale import BealeRule, BealeUse, beale_span
from nuggets_app.ir.estimator import REPORTED, Estimator, Tuning, power_tuning
from nuggets_app.ir.prels import TopicPrels


def beale_everywhere(est_r: float, var_r: float, *, floored: bool) -> BealeUse:
    """Beale on every topic, the interval its own (``beale:true``)."""
    return BealeUse(corrects=True, spans=False)


def beale_unfloored(est_r: float, var_r: float, *, floored: bool) -> BealeUse:
    """Beale only where R̂ was not raised to its floor: a floored denominator is the
    constant m, not R̂, and has no 1/R̂ expansion (``beale:unfloored``)."""
    return BealeUse(corrects=not floored, spans=False)


@dataclass(frozen=True)
class BealeCV:
    """Beale only where R̂'s coefficient of variation ``sqrt(V̂_R)/R̂`` is at most
    ``bound``, where the second-order expansion holds (``beale:0.5``)."""

    bound: float = 0.5

    def __call__(self, est_r: float, var_r: float, *, floored: bool) -> BealeUse:
        return BealeUse(corrects=var_r <= (self.bound * est_r) ** 2, spans=False)


BEALE_CV = BealeCV(0.5)
BEALE_RULES: Mapping[str, BealeRule | None] = {
    "span": beale_span,
    "true": beale_everywhere,
    "unfloored": beale_unfloored,
    "false": None,
}


def full_tuning(
    judged: TopicPrels, probs: Mapping[str, float], *, level: int = 1
) -> float:
    """λ̂ itself instead of the reported ``(1 + λ̂)/2`` (``lam:full``)."""
    return 2 * power_tuning(judged, probs, level=level) - 1


def beale_rule(value: str) -> BealeRule | None:
    """A Beale rule by its name in :data:`BEALE_RULES`, or a CV bound (a number)."""
    if value in BEALE_RULES:
        return BEALE_RULES[value]
    return BealeCV(float(value))


def estimator_parse(
    options: Mapping[str, str], base: Estimator = REPORTED
) -> Estimator:
    """``base`` with the options given: ``beale`` (:func:`beale_rule`), ``tune``
    (``true``/``false``), ``lam`` (``full``: :func:`full_tuning` where p is tuned),
    ``bounded`` (``true``/``false``) and ``interval`` (a method of
    :mod:`nuggets_app.ir.intervals`). Other keys are the caller's."""
    flags = {"true": True, "false": False}
    found = base
    if "beale" in options:
        found = replace(found, beale=beale_rule(options["beale"]))
    if "bounded" in options:
        found = replace(found, bounded=flags[options["bounded"]])
    if "interval" in options:
        found = replace(found, interval=options["interval"])
    tuning: Tuning | None = found.tuning
    if "tune" in options:
        tuning = power_tuning if flags[options["tune"]] else None
    if options.get("lam") == "full" and tuning is not None:
        tuning = full_tuning
    return replace(found, tuning=tuning)
