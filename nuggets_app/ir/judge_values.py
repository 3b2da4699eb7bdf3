"""A judge's label as one number, the value from which it calls a document relevant,
and its strength of relevance in [0, 1] (what steers a judge-shaped sample).

One reading for every caller: the judges' audit, their releases and the sample design
(:mod:`nuggets_app.ir.judge_sampling`). Kinds are the judge's kind names: ``graded``
(an integer grade), ``score`` (any number, higher is more relevant) and
``probabilities`` (``{"0": p0, "1": p1, ...}`` per grade, or ``{"yes": p}``). No
Django here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

GRADED = "graded"
SCORE = "score"
PROBABILITIES = "probabilities"

# A judge's probability or score at or above this counts as its "relevant" (scores:
# when every score lies in [0, 1] and the judge has no threshold of its own).
PROBABILITY_CUT = 0.5

# What a kind's values are, as the audit names them.
WHAT = {GRADED: "grade", PROBABILITIES: "probability of relevance", SCORE: "score"}


def probability_relevant(probs: Mapping[str, float], level: int) -> float:
    """P(grade >= ``level``), or P(yes)."""
    if "yes" in probs:
        return probs["yes"]
    return sum(p for grade, p in probs.items() if int(grade) >= level)


def label_value(
    kind: str,
    grade: int | None,
    score: float | None,
    probabilities: Mapping[str, float] | None,
    level: int,
) -> float | None:
    """The label's one number by the judge's kind: its grade, its probability of a
    grade >= ``level`` (or of yes), or its score; None when the field is empty."""
    if kind == GRADED and grade is not None:
        return float(grade)
    if kind == PROBABILITIES and probabilities:
        return probability_relevant(probabilities, level)
    if score is not None:
        return float(score)
    return None


def judge_cut(
    kind: str, values: Iterable[float], level: int, threshold: float | None
) -> float | None:
    """The value from which the judge calls a document relevant: the relevance level
    for grades, ``PROBABILITY_CUT`` for probabilities and for scores in [0, 1] with no
    threshold, else the judge's threshold; None for scores outside [0, 1] with none."""
    if kind == GRADED:
        return float(level)
    if kind == PROBABILITIES:
        return PROBABILITY_CUT
    if threshold is not None:
        return threshold
    if all(0.0 <= v <= 1.0 for v in values):
        return PROBABILITY_CUT
    return None


def relevance_strength(value: float, *, kind: str, cut: float) -> float:
    """How strongly the judge calls a document relevant, in [0, 1]: a probability
    itself; a grade as ``grade / level`` (1 from the level up); a score as 1 at or
    above the cut, else 0 (a score's scale says nothing of probability)."""
    if kind == PROBABILITIES:
        return min(1.0, max(0.0, value))
    if kind == GRADED and cut > 0:
        return min(1.0, max(0.0, value / cut))
    return 1.0 if value >= cut else 0.0
