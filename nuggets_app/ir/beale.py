"""Where Beale's ratio correction of AP applies: a rule, one field of the estimator
(docs/explanation/model-assisted.md, "Where Beale's expansion holds"). No Django here.

A rule is called on a topic with ``R̂ > 0`` and says whether its AP is corrected and
whether its interval also spans the uncorrected ratio. The product carries the rule it
reports, :func:`beale_span`; rules measured and not reported are the lab's.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol


class BealeUse(NamedTuple):
    """What a rule decides on one topic."""

    corrects: bool  # AP by Beale's ratio estimator
    spans: bool  # the interval also spans the uncorrected ratio N̂/R̂


class BealeRule(Protocol):
    """Where Beale's correction applies, from the topic's ``R̂ > 0``, ``V̂_R`` and
    whether ``R̂`` was raised to its floor (the relevant documents judged)."""

    def __call__(self, est_r: float, var_r: float, *, floored: bool) -> BealeUse: ...


def beale_span(est_r: float, var_r: float, *, floored: bool) -> BealeUse:
    """The reported rule: Beale on every topic; where R̂ was raised to its floor the
    topic's interval also spans the uncorrected ratio N̂/m. The floored ratio
    over-states AP whenever R > m, and Beale's correction of it has no expansion of
    1/R̂ to rest on (its denominator is the constant m), so neither is preferred and
    the interval covers both."""
    return BealeUse(corrects=True, spans=floored)
