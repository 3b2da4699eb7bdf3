"""A decision rule's one grammar and the one check of its values. Pure, Django-free.

Every way of giving a rule goes through here: a command's rule options (a spec, a
threshold, a top N, or a fitted rule ``fB``, the same as the spec ``fit:fB``), the
pages' rule form and its download links (through the rule itself,
:class:`nuggets_app.inference.services.decision_rule.DecisionRule`, which checks its values
with :func:`threshold_check` and :func:`top_n_check`), and the simulation's rule
syntax (:func:`lab.maths.simulation.rule_parse` wraps :func:`rule_spec_parse`).

The spellings, ``KIND:VALUE``:

- ``p:X``: the model's p >= X, X a probability in [0, 1];
- ``expected-f1``: p >= the threshold of best expected F1 under the model;
- ``top:N``: the N best documents per topic, N a whole number >= 1;
- ``paper:X`` (or ``threshold:X``): min-span score >= X, X within the scores' range
  [0, 1] (a score is lambda^((S-k)/k) <= 1 of a nugget's best window);
- ``fit:fB`` or ``fit:fB:per-topic``: the score threshold with the best F-beta on the
  job's held-out judged documents (:mod:`nuggets_app.learning.thresholds`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from nuggets_app.errors import DomainError
from nuggets_app.learning.thresholds import SCOPES, FitError

SPEC_PAPER = ("paper", "threshold")  # min-span score >= X (the paper rule)
SPEC_TOP = "top"  # the N best documents per topic
SPEC_PROBABILITY = "p"  # the model's p >= X
SPEC_EXPECTED_F1 = "expected-f1"  # p >= the threshold of best expected F1
SPEC_FIT = "fit"  # the score threshold of best F-beta on held-out judgments
RULE_SPECS = "p:X, expected-f1, top:N, paper:X or fit:fB[:per-topic]"

# The values a threshold may take, by the rule's kind: a probability, or a min-span
# score (lambda^((S-k)/k) with lambda in (0, 1] and S >= k, so never above 1).
PROBABILITY_RANGE = (0.0, 1.0)
SCORE_RANGE = (0.0, 1.0)


class RuleError(DomainError):
    """A rule cannot be read or its value is out of range; the message says which."""


@dataclass(frozen=True)
class RuleSpec:
    """A parsed rule: ``kind`` one of ``threshold``, ``probability``,
    ``expected_f1``, ``top_n``, ``fit``, with the value its kind takes."""

    kind: str
    threshold: float | None = None
    n: int | None = None
    beta: float | None = None
    scope: str = "global"


def threshold_check(kind: str, value: float) -> float:
    """``value`` when it is a threshold the rule ``kind`` can use, else RuleError:
    a probability rule's in [0, 1], the paper rule's within the scores' range."""
    number = float(value)
    low, high = PROBABILITY_RANGE if kind == "probability" else SCORE_RANGE
    what = (
        "a probability threshold is in"
        if kind == "probability"
        else "a score threshold is within the min-span scores' range"
    )
    if not (math.isfinite(number) and low <= number <= high):
        raise RuleError(f"{what} [{low:g}, {high:g}], got {value!r}")
    return number


def top_n_check(n: object) -> int:
    """``n`` when it is a whole number >= 1, else RuleError."""
    if isinstance(n, bool) or not isinstance(n, int | float) or n != int(n) or n < 1:
        raise RuleError(f"top N needs a whole number N >= 1, got {n!r}")
    return int(n)


def fit_spec_parse(text: str) -> tuple[float, str]:
    """``fB`` or ``fB:per-topic`` (e.g. ``f1``, ``f0.5:per-topic``) as (beta, scope)."""
    objective, _, scope = text.partition(":")
    scope = scope or "global"
    try:
        beta = float(objective[1:]) if objective[:1] == "f" else float("nan")
    except ValueError:
        beta = float("nan")
    if not (beta > 0 and beta != float("inf")) or scope not in SCOPES:
        raise FitError(f"fit: expected fB or fB:per-topic (e.g. f1), got {text!r}")
    return beta, scope


def _number(text: str, default: float | None) -> float:
    if not text and default is not None:
        return default
    try:
        return float(text)
    except ValueError:
        raise RuleError(f"expected a number, got {text!r}") from None


def rule_spec_parse(text: str, *, default_threshold: float = 0.5) -> RuleSpec:
    """The rule spelled ``text`` (see the module's grammar), its value checked; a
    bad spelling or value raises RuleError naming the spec. ``p`` and ``paper``
    without a value take ``default_threshold``."""
    spec = text.strip()
    kind, _, value = spec.partition(":")
    try:
        if kind == SPEC_PROBABILITY:
            number = _number(value, default_threshold)
            return RuleSpec("probability", threshold_check("probability", number))
        if kind in SPEC_PAPER:
            number = _number(value, default_threshold)
            return RuleSpec("threshold", threshold_check("threshold", number))
        if kind == SPEC_EXPECTED_F1 and not value:
            return RuleSpec("expected_f1")
        if kind == SPEC_TOP:
            return RuleSpec("top_n", n=top_n_check(_number(value, None)))
        if kind == SPEC_FIT:
            beta, scope = fit_spec_parse(value)
            return RuleSpec("fit", beta=beta, scope=scope)
    except DomainError as exc:  # a value's check (RuleError, FitError)
        raise RuleError(f"rule {spec!r}: {exc}") from None
    raise RuleError(f"rule {spec!r}: expected {RULE_SPECS}")
