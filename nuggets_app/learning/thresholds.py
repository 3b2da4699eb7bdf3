"""Decision rules fitted on judged documents: the score threshold with the best F-beta.

Pure and Django-free. Input: per topic, ``(score, relevant?)`` of the *held-out* judged
documents (judged, and not the source of one of the topic's nuggets: a nugget's own
document matches it almost perfectly and would pull the threshold up).

A threshold ``t`` infers relevant every document with ``score >= t``. Candidates are
the distinct positive scores of the judged documents (a threshold of 0 would infer
every document without a single matched shingle). For a candidate ``t``::

    tp = relevant with score >= t     fp = non-relevant with score >= t
    fn = relevant with score < t
    F_beta = (1 + beta^2) tp / ((1 + beta^2) tp + beta^2 fn + fp)

The fitted threshold maximises ``F_beta`` (compared exactly, as fractions); ties go to
the higher threshold (fewer documents inferred for the same quality). Default beta = 1
(F1).

Scopes: ``global`` pools the documents of every topic; ``per-topic`` fits each topic
on its own documents, and a topic with fewer than ``min_relevant`` (default 2) judged
relevant held-out documents, or whose best F is 0, keeps the global threshold.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from nuggets_app.errors import DomainError

SCOPES = ("global", "per-topic")

Judged = Sequence[tuple[float, bool]]


class FitError(DomainError):
    """No threshold can be fitted (e.g. no judged relevant document)."""


@dataclass(frozen=True)
class ThresholdFit:
    """The best threshold of one set of judged documents, with its counts."""

    threshold: float
    f_beta: float
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0


@dataclass(frozen=True)
class RuleFit:
    """A fitted rule: the global threshold, per-topic thresholds, and which topics
    fell back to the global one."""

    scope: str
    beta: float
    overall: ThresholdFit
    per_topic: dict[str, ThresholdFit] = field(default_factory=dict)
    fallback: tuple[str, ...] = ()

    def thresholds(self) -> dict[str, float]:
        """{qid: threshold} of the topics fitted on their own documents."""
        return {qid: fit.threshold for qid, fit in self.per_topic.items()}


def f_beta(tp: int, fp: int, fn: int, beta: float = 1.0) -> Fraction:
    """Exact F-beta of confusion counts (0 when ``tp`` is 0)."""
    if tp == 0:
        return Fraction(0)
    b2 = Fraction(beta) ** 2
    return (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp)


def threshold_fit(
    judged: Iterable[tuple[float, bool]], *, beta: float = 1.0
) -> ThresholdFit | None:
    """The :class:`ThresholdFit` with the best F-beta, or ``None`` without a
    positive-scored judged document or a judged relevant one."""
    if not beta > 0:
        raise FitError(f"beta must be > 0, got {beta}")
    pairs = sorted(((float(s), bool(r)) for s, r in judged), key=lambda p: -p[0])
    relevant = sum(r for _, r in pairs)
    if relevant == 0:
        return None
    best: tuple[Fraction, float, int, int] | None = None
    tp = fp = 0
    for i, (score, is_relevant) in enumerate(pairs):
        if score <= 0:
            break
        tp += is_relevant
        fp += not is_relevant
        if i + 1 < len(pairs) and pairs[i + 1][0] == score:
            continue  # tied scores enter together
        value = f_beta(tp, fp, relevant - tp, beta)
        # Scores fall as i grows, so only a strictly better F moves the threshold down.
        if best is None or value > best[0]:
            best = (value, score, tp, fp)
    if best is None:
        return None
    value, score, tp, fp = best
    return ThresholdFit(score, float(value), tp, fp, relevant - tp)


def rule_fit_thresholds(
    judged: Mapping[str, Judged],
    *,
    beta: float = 1.0,
    scope: str = "global",
    min_relevant: int = 2,
) -> RuleFit:
    """Fit the threshold on ``{qid: [(score, relevant?), ...]}``.

    Raises :class:`FitError` when no threshold can be fitted globally.
    """
    if scope not in SCOPES:
        raise FitError(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    pooled = [pair for qid in sorted(judged) for pair in judged[qid]]
    overall = threshold_fit(pooled, beta=beta)
    if overall is None or overall.tp == 0:
        raise FitError(
            "no judged relevant held-out document with a positive score to fit on"
        )
    if scope == "global":
        return RuleFit(scope, beta, overall)
    per_topic: dict[str, ThresholdFit] = {}
    fallback = []
    for qid in sorted(judged):
        relevant = sum(bool(r) for _, r in judged[qid])
        fit = (
            threshold_fit(judged[qid], beta=beta)
            if relevant >= max(min_relevant, 1)
            else None
        )
        if fit is None or fit.tp == 0:
            fallback.append(qid)
        else:
            per_topic[qid] = fit
    return RuleFit(scope, beta, overall, per_topic, tuple(fallback))


# --- Expected F1 under probabilities ------------------------------------------------------


@dataclass(frozen=True)
class ExpectedF1Fit:
    """The probability threshold with the best expected F1, and what it infers."""

    threshold: float
    expected_f1: float
    inferred: int
    expected_tp: float
    expected_relevant: float


def expected_f1_threshold(probabilities: Iterable[float]) -> ExpectedF1Fit:
    """The threshold ``t`` maximising expected F1 when every document with ``p >= t``
    is called relevant, under the model's own probabilities.

    With ``S`` the documents called relevant, expected F1 is taken as the ratio of
    expectations ``2 Σ_{S} p / (|S| + Σ_all p)`` (the usual approximation; exact when
    the number of relevant documents is fixed). Only sets of the form ``p >= t`` are
    considered (they are the best for every size); tied probabilities enter together;
    ties in F1 go to the higher threshold. With no positive probability the threshold
    is 1.0 and nothing with ``p < 1`` is inferred.
    """
    values = sorted((min(max(float(p), 0.0), 1.0) for p in probabilities), reverse=True)
    total = math.fsum(values)
    best = ExpectedF1Fit(1.0, 0.0, 0, 0.0, total)
    if total <= 0:
        return best
    cumulative = 0.0
    for i, p in enumerate(values):
        cumulative += p
        if p <= 0:
            break
        if i + 1 < len(values) and values[i + 1] == p:
            continue
        f1 = 2.0 * cumulative / (i + 1 + total)
        if f1 > best.expected_f1:
            best = ExpectedF1Fit(p, f1, i + 1, cumulative, total)
    return best
