"""Where Beale's ratio correction of AP applies (docs/explanation/model-assisted.md,
"Where Beale's expansion holds"). No Django here."""

from __future__ import annotations

# beale=BEALE_CV: Beale only where R̂'s CV <= 1/2 (measured, not reported: explanation).
BEALE_CV = 0.5
# beale=BEALE_UNFLOORED: Beale only where R̂ was not raised to its floor (measured, not
# reported: docs/results/intervals.md).
BEALE_UNFLOORED = "unfloored"
Beale = bool | float | str  # True, a CV bound, or BEALE_UNFLOORED


def beale_applies(
    beale: Beale, est_r: float, var_r: float, *, floored: bool = False
) -> bool:
    """Is AP corrected by Beale's estimator on this topic? ``True``: wherever
    ``R̂ > 0``; a number c: only where R̂'s coefficient of variation
    ``sqrt(V̂_R)/R̂`` is at most c (the second-order expansion holds there);
    :data:`BEALE_UNFLOORED`: only where R̂ was not raised to its floor (a floored
    denominator is the constant m, not R̂, and has no 1/R̂ expansion)."""
    if beale is False or not est_r > 0:
        return False
    if beale == BEALE_UNFLOORED:
        return not floored
    return beale is True or var_r <= (float(beale) * est_r) ** 2
