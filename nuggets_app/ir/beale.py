"""Where Beale's ratio correction of AP applies (docs/explanation/model-assisted.md,
"Where Beale's expansion holds"). No Django here."""

from __future__ import annotations

# beale=BEALE_CV: Beale only where R̂'s CV <= 1/2 (measured, not reported: explanation).
BEALE_CV = 0.5
# beale=BEALE_UNFLOORED: Beale only where R̂ was not raised to its floor (measured, not
# reported: docs/results/intervals.md).
BEALE_UNFLOORED = "unfloored"
# beale=BEALE_SPAN (reported): Beale on every topic; where R̂ was raised to its floor the
# topic's interval also spans the uncorrected ratio N̂/m (explanation, "Where Beale's
# expansion holds").
BEALE_SPAN = "span"
Beale = bool | float | str  # True, a CV bound, BEALE_UNFLOORED or BEALE_SPAN


def beale_applies(
    beale: Beale, est_r: float, var_r: float, *, floored: bool = False
) -> bool:
    """Is AP corrected by Beale's estimator on this topic? ``True``: wherever
    ``R̂ > 0``; a number c: only where R̂'s coefficient of variation
    ``sqrt(V̂_R)/R̂`` is at most c (the second-order expansion holds there);
    :data:`BEALE_UNFLOORED`: only where R̂ was not raised to its floor (a floored
    denominator is the constant m, not R̂, and has no 1/R̂ expansion);
    :data:`BEALE_SPAN`: wherever ``R̂ > 0``, as True (the interval's span is the
    caller's, :func:`spans_uncorrected`)."""
    if beale is False or not est_r > 0:
        return False
    if beale == BEALE_UNFLOORED:
        return not floored
    if beale is True or beale == BEALE_SPAN:
        return True
    return var_r <= (float(beale) * est_r) ** 2


def spans_uncorrected(beale: Beale, *, floored: bool) -> bool:
    """Does the topic's AP interval also span the ratio without Beale's correction?
    Under :data:`BEALE_SPAN`, where R̂ was floored: the floored ratio N̂/m over-states
    AP whenever R > m, and Beale's correction of it has no expansion to rest on, so
    neither is preferred and the interval covers both."""
    return beale == BEALE_SPAN and floored
