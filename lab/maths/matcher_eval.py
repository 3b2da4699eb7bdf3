"""The matcher against people: scores of (unit, nugget) pairs against human matches.

A *unit* is a text that people read and marked nuggets in (a TREC TS sentence, or a
pseudo-document of pooled sentences); a *pair* is ``(qid, unit id, nugget id)`` for a
unit and a nugget of the same topic; the *gold* pairs are the ones people matched.
A scoring function gives each pair a score in [0, 1]; a pair without a score scores 0.

Measures (all over the candidate pairs, i.e. every unit x every nugget of its topic):

* at a threshold t: predicted = pairs with score >= t and score > 0; precision,
  recall and F1 against the gold pairs (precision 1 when nothing is predicted);
* average precision: pairs with score > 0 ranked by score (ties by pair, so the
  order is reproducible), AP = sum over gold pairs found at rank r of precision@r,
  divided by the number of gold pairs (a gold pair scoring 0 is never found);
* best F1: the highest F1 over every distinct score as threshold, and that
  threshold;
* the *unit* level: a unit's score is its best pair score, gold when it has any
  gold pair (relevance rather than nugget identity).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from matcher import MatchOptions, NuggetSpec, TopicMatcher
from nuggets_app.learning.retrieval import InvertedIndex, bm25
from nuggets_app.learning.semantic import (
    DEFAULT_MAX_WORDS,
    Embed,
    best_windows,
    combined_score,
    text_windows,
)

Pair = tuple[str, str, str]
Scores = dict[Pair, float]
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 21))


@dataclass(frozen=True)
class Unit:
    """A text people read: its id, its topic and its text."""

    id: str
    qid: str
    text: str


@dataclass(frozen=True)
class GoldNugget:
    """A nugget of a topic with its importance grade (None if ungraded)."""

    id: str
    qid: str
    text: str
    grade: int | None = None


@dataclass(frozen=True)
class ThresholdPoint:
    threshold: float
    predicted: int
    true_positives: int
    precision: float
    recall: float
    f1: float


@dataclass(frozen=True)
class MatchQuality:
    """Precision/recall per threshold, AP and the best-F1 threshold of one scoring."""

    pairs: int
    gold: int
    scored: int
    average_precision: float
    best_f1: float
    best_threshold: float
    best_precision: float
    best_recall: float
    points: tuple[ThresholdPoint, ...]


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _ranked(scores: Mapping[Pair, float]) -> list[tuple[Pair, float]]:
    return sorted(
        ((p, s) for p, s in scores.items() if s > 0), key=lambda x: (-x[1], x[0])
    )


def match_quality(
    scores: Mapping[Pair, float],
    gold: Iterable[Pair],
    *,
    pairs: int,
    thresholds: Sequence[float] = THRESHOLDS,
) -> MatchQuality:
    """Every measure of the module doc for ``scores`` against ``gold``; ``pairs`` is
    the number of candidate pairs (for the record only)."""
    gold_set = set(gold)
    ranked = _ranked(scores)
    found = 0
    ap_sum = 0.0
    best = (0.0, math.inf, 1.0, 0.0)
    for rank, (pair, score) in enumerate(ranked, start=1):
        if pair in gold_set:
            found += 1
            ap_sum += found / rank
        # The threshold at this score takes every pair down to the last tie.
        is_last_of_tie = rank == len(ranked) or ranked[rank][1] < score
        if is_last_of_tie and gold_set:
            precision, recall = found / rank, found / len(gold_set)
            f1 = _f1(precision, recall)
            if f1 > best[0]:
                best = (f1, score, precision, recall)
    points = []
    for t in thresholds:
        predicted = [p for p, s in ranked if s >= t]
        tp = sum(1 for p in predicted if p in gold_set)
        precision = tp / len(predicted) if predicted else 1.0
        recall = tp / len(gold_set) if gold_set else math.nan
        points.append(
            ThresholdPoint(
                t, len(predicted), tp, precision, recall, _f1(precision, recall)
            )
        )
    return MatchQuality(
        pairs=pairs,
        gold=len(gold_set),
        scored=len(ranked),
        average_precision=ap_sum / len(gold_set) if gold_set else math.nan,
        best_f1=best[0],
        best_threshold=best[1],
        best_precision=best[2],
        best_recall=best[3],
        points=tuple(points),
    )


def unit_scores(scores: Mapping[Pair, float]) -> dict[Pair, float]:
    """A unit's best pair score, keyed ``(qid, unit, "")``."""
    best: dict[Pair, float] = {}
    for (qid, unit, _), score in scores.items():
        key = (qid, unit, "")
        if score > best.get(key, 0.0):
            best[key] = score
    return best


def unit_gold(gold: Iterable[Pair]) -> set[Pair]:
    """The units with at least one gold pair, keyed ``(qid, unit, "")``."""
    return {(qid, unit, "") for qid, unit, _ in gold}


def candidate_pairs(units: Sequence[Unit], nuggets: Sequence[GoldNugget]) -> int:
    """How many (unit, nugget) pairs share a topic."""
    per_topic: dict[str, int] = {}
    for nugget in nuggets:
        per_topic[nugget.qid] = per_topic.get(nugget.qid, 0) + 1
    return sum(per_topic.get(u.qid, 0) for u in units)


def _by_topic(
    units: Sequence[Unit], nuggets: Sequence[GoldNugget]
) -> dict[str, tuple[list[Unit], list[GoldNugget]]]:
    topics: dict[str, tuple[list[Unit], list[GoldNugget]]] = {}
    for nugget in nuggets:
        topics.setdefault(nugget.qid, ([], []))[1].append(nugget)
    for unit in units:
        if unit.qid in topics:
            topics[unit.qid][0].append(unit)
    return topics


def minspan_scores(
    units: Sequence[Unit],
    nuggets: Sequence[GoldNugget],
    *,
    k: int,
    lams: Sequence[float],
) -> dict[float, Scores]:
    """Min-span nugget scores (docs/reference/algorithms.md 4.2) of every pair, for each lambda.

    The matcher's evidence (window lengths) does not depend on lambda, so each unit
    is matched once and re-scored for every value of ``lams``.
    """
    result: dict[float, Scores] = {lam: {} for lam in lams}
    options = MatchOptions(k=k, lam=lams[0])
    for qid, (topic_units, topic_nuggets) in sorted(_by_topic(units, nuggets).items()):
        matcher = TopicMatcher(
            [NuggetSpec(n.id, n.text) for n in topic_nuggets], options
        )
        for unit in topic_units:
            evidence = matcher.score(unit.text).evidence
            for item in evidence.nuggets:
                for lam in lams:
                    score = item.score(lam)
                    if score > 0:
                        result[lam][(qid, unit.id, item.nugget)] = score
    return result


def bm25_scores(units: Sequence[Unit], nuggets: Sequence[GoldNugget]) -> Scores:
    """BM25 of each nugget's text as a query against its topic's units (statistics
    from those units), divided by the nugget's highest score there: in [0, 1]."""
    scores: Scores = {}
    for qid, (topic_units, topic_nuggets) in sorted(_by_topic(units, nuggets).items()):
        if not topic_units:
            continue
        index = InvertedIndex.build((u.id, u.text) for u in topic_units)
        for nugget in topic_nuggets:
            values = bm25(index, index.query(nugget.text))
            top = float(values.max()) if len(values) else 0.0
            if top <= 0:
                continue
            for row in values.nonzero()[0]:
                scores[(qid, index.docnos[row], nugget.id)] = float(values[row]) / top
    return scores


def semantic_scores(
    units: Sequence[Unit],
    nuggets: Sequence[GoldNugget],
    embed: Embed,
    *,
    max_words: int = DEFAULT_MAX_WORDS,
) -> Scores:
    """Semantic score of every pair (:mod:`nuggets_app.learning.semantic`): the
    highest cosine of the nugget to a window of the unit, floored at 0. ``embed``
    is called once, with every distinct window and nugget text."""
    windows = {(u.qid, u.id): text_windows(u.text, max_words=max_words) for u in units}
    texts = [u.text[w.start : w.end] for u in units for w in windows[(u.qid, u.id)]]
    texts += [n.text for n in nuggets]
    rows = {t: i for i, t in enumerate(dict.fromkeys(texts))}
    vectors = embed(list(rows))
    scores: Scores = {}
    for qid, (topic_units, topic_nuggets) in sorted(_by_topic(units, nuggets).items()):
        nugget_vectors = vectors[[rows[n.text] for n in topic_nuggets]]
        for unit in topic_units:
            unit_windows = windows[(qid, unit.id)]
            window_vectors = vectors[
                [rows[unit.text[w.start : w.end]] for w in unit_windows]
            ]
            matches = best_windows(window_vectors, nugget_vectors)
            for nugget, match in zip(topic_nuggets, matches, strict=True):
                if match.similarity > 0:
                    scores[(qid, unit.id, nugget.id)] = match.similarity
    return scores


def combined_scores(minspan: Scores, semantic: Scores, *, weight: float) -> Scores:
    """:func:`nuggets_app.learning.semantic.combined_score` of every pair scored by
    either."""
    return {
        pair: combined_score(
            minspan.get(pair, 0.0), semantic.get(pair, 0.0), weight=weight
        )
        for pair in minspan.keys() | semantic.keys()
    }


def matched_spans(unit_text: str, nugget_text: str, *, k: int) -> list[tuple[int, int]]:
    """The character windows where the matcher found the nugget's shingles."""
    matcher = TopicMatcher([NuggetSpec("n", nugget_text)], MatchOptions(k=k))
    return list(matcher.score(unit_text).spans)


def recall_by(
    gold: Iterable[Pair],
    found: Iterable[Pair],
    key: Mapping[Pair, str],
) -> dict[str, tuple[int, int, float]]:
    """Gold pairs, found gold pairs and recall per value of ``key`` (e.g. a length
    bin or a grade)."""
    found_set = set(found)
    counts: dict[str, list[int]] = {}
    for pair in gold:
        bucket = counts.setdefault(key.get(pair, "?"), [0, 0])
        bucket[0] += 1
        bucket[1] += pair in found_set
    return {
        k: (n, hit, hit / n if n else math.nan)
        for k, (n, hit) in sorted(counts.items())
    }
