"""Nuggets that score answers: which nuggets a generated answer contains, its nugget
recall, a system's mean over topics with its interval, and agreement with people.

An answer contains a nugget when the shingle min-span matcher scores the nugget
against the answer's text at or above a threshold (default 0.5, the paper rule's):
every shingle of the nugget occurs in the answer within a short window
(:mod:`matcher`). Per answer:

- recall (all): contained nuggets / the topic's nuggets;
- weighted recall: the same with weight 1 for a vital nugget (grade >= 2: TREC QA
  and RAG vital, TREC TS importance 2-3) and 0.5 for any other (TREC RAG 2024's
  vital/okay weighting).

A system's figure is the mean over the topics evaluated (a topic it did not answer
counts 0), with a 95% Wilson-type interval over topics as clusters
(:func:`nuggets_app.ir.proportions.mean_proportion_interval`): inside [0, 1], never
narrower than Wilson's with one trial per topic where the topics agree; it covers
the choice of topics as a sample of like topics, not the matcher's error.
No Django here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from matcher import MatchOptions, NuggetSpec, TopicMatcher
from nuggets_app.ir.proportions import mean_proportion_interval

DEFAULT_THRESHOLD = 0.5
VITAL_GRADE = 2
OKAY_WEIGHT = 0.5


@dataclass(frozen=True)
class NuggetFound:
    """One nugget against one answer: its min-span score, the decision and the
    matched spans (``[start, end)`` in the answer's text; empty when not contained)."""

    nugget: str
    score: float
    contained: bool
    spans: tuple[tuple[int, int], ...]
    weight: float


@dataclass(frozen=True)
class Interval:
    """A mean over topics with its 95% interval and the number of topics."""

    mean: float
    low: float
    high: float
    n: int


def nugget_weight(grade: int | None) -> float:
    """1 for a vital nugget (grade >= 2), 0.5 for any other."""
    return 1.0 if grade is not None and grade >= VITAL_GRADE else OKAY_WEIGHT


class AnswerMatcher:
    """One topic's nuggets, compiled once, scored against answers."""

    def __init__(
        self,
        nuggets: Sequence[NuggetSpec],
        options: MatchOptions | None = None,
        threshold: float = DEFAULT_THRESHOLD,
    ) -> None:
        self.options = options or MatchOptions()
        self.threshold = threshold
        self.nuggets = list(nuggets)
        self._topic = TopicMatcher(self.nuggets, self.options)
        self._single: dict[str, TopicMatcher] = {}

    def _spans(self, spec: NuggetSpec, text: str) -> tuple[tuple[int, int], ...]:
        if spec.id not in self._single:
            self._single[spec.id] = TopicMatcher([spec], self.options)
        return self._single[spec.id].score(text).spans

    def score(self, text: str) -> list[NuggetFound]:
        """Every nugget of the topic against ``text``, in the nuggets' order."""
        match = self._topic.score(text)
        scores = {e.nugget: e.score(self.options.lam) for e in match.evidence.nuggets}
        found = []
        for spec in self.nuggets:
            score = scores.get(spec.id, 0.0)
            contained = score >= self.threshold
            found.append(
                NuggetFound(
                    nugget=spec.id,
                    score=score,
                    contained=contained,
                    spans=self._spans(spec, text) if contained else (),
                    weight=nugget_weight(spec.grade),
                )
            )
        return found


def answer_recall(found: Sequence[NuggetFound]) -> tuple[float, float]:
    """(recall, weighted recall) of one answer; (0, 0) without nuggets."""
    if not found:
        return 0.0, 0.0
    total = sum(f.weight for f in found)
    recall = sum(f.contained for f in found) / len(found)
    weighted = sum(f.weight for f in found if f.contained) / total
    return recall, weighted


def mean_interval(values: Sequence[float]) -> Interval:
    """The mean of per-topic proportions with its 95% interval over topics as
    clusters (:func:`~nuggets_app.ir.proportions.mean_proportion_interval`); NaNs
    without a topic."""
    found = mean_proportion_interval(values)
    return Interval(found.mean, found.low, found.high, found.n)


@dataclass(frozen=True)
class Agreement:
    """A decision against people's on pairs: counts, precision, recall, F1."""

    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else math.nan

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else math.nan

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else math.nan


def pair_agreement(pairs: Iterable[tuple[bool, bool]]) -> Agreement:
    """Counts of (decided, people) pairs: a true positive is a pair both say holds."""
    tp = fp = fn = tn = 0
    for decided, people in pairs:
        if decided and people:
            tp += 1
        elif decided:
            fp += 1
        elif people:
            fn += 1
        else:
            tn += 1
    return Agreement(tp, fp, fn, tn)
