"""Expected measures under probabilistic qrels: each document relevant with probability p.

Pure and Django-free. Qrels are ``qid -> {docno: p}`` with ``p`` in [0, 1] (a human
label is p = 1 or 0; the inference model's probability elsewhere; a document absent
from the qrels has p = 0). Labels are taken as independent Bernoulli variables. Runs are
``qid -> {docno: score}``, ranked as trec_eval does (score descending, then docno
descending), every retrieved document counting (no depth cut beyond ``k``).

* Expected precision at k: ``EP@k = (1/k) Σ_{i<=k} p_i`` (exact expectation).
* Expected AP (the standard ratio approximation):
  ``EAP = [Σ_k p_k (1 + Σ_{j<k} p_j) / k] / Σ_all p``. The numerator is exactly
  ``E[Σ_k rel_k · prec@k]`` (AP times R); the denominator is ``E[R]`` over every
  document of the topic's qrels, retrieved or not. ``E[AP]`` itself is not a ratio of
  expectations; this is the usual estimate, exact when R is fixed.
* Expected nDCG@k with expected gains: ``DCG@k = Σ_{i<=k} g_i / log2(i + 1)`` with
  ``g`` = p for binary relevance (or the expected grade), divided by the DCG of the
  qrels' gains sorted descending (again a ratio of expectations).

Per-topic values and their mean over the qrels topics with ``Σ p > 0`` (as trec_eval
averages over topics with a relevant document), in :class:`ExpectedEvaluation`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from nuggets_app.ir.measures import MeasureError
from nuggets_app.ir.prels import ranking_order, topic_key

L = TypeVar("L", int, float)

ProbQrels = Mapping[str, Mapping[str, float]]
Run = Mapping[str, Mapping[str, float]]
EXPECTED_MEASURES = ("EAP", "EP@10", "EnDCG@10")


def expected_ap(ranking: Sequence[str], probs: Mapping[str, float]) -> float:
    """EAP of a ranked docno list; NaN when ``Σ p`` is 0."""
    total = math.fsum(probs.values())
    if total <= 0:
        return math.nan
    above = 0.0
    value = 0.0
    for k, docno in enumerate(ranking, start=1):
        p = probs.get(docno, 0.0)
        value += p * (1.0 + above) / k
        above += p
    return value / total


def expected_precision(
    ranking: Sequence[str], probs: Mapping[str, float], k: int
) -> float:
    """EP@k: expected relevant documents in the top ``k``, over ``k``."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return math.fsum(probs.get(d, 0.0) for d in ranking[:k]) / k


def expected_ndcg(ranking: Sequence[str], gains: Mapping[str, float], k: int) -> float:
    """EnDCG@k with expected gains; NaN when every gain is 0."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    ideal = sorted((g for g in gains.values() if g > 0), reverse=True)[:k]
    idcg = math.fsum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    if idcg <= 0:
        return math.nan
    dcg = math.fsum(
        gains.get(d, 0.0) / math.log2(i + 2) for i, d in enumerate(ranking[:k])
    )
    return dcg / idcg


def _measure(name: str) -> tuple[str, int | None]:
    kind, _, cut = name.partition("@")
    if kind == "EAP" and not cut:
        return kind, None
    if kind in ("EP", "EnDCG") and cut.isdigit() and int(cut) > 0:
        return kind, int(cut)
    raise MeasureError(f"unknown expected measure {name!r} (EAP, EP@k, EnDCG@k)")


def topic_expected(
    name: str, scores: Mapping[str, float], probs: Mapping[str, float]
) -> float:
    """One measure (``EAP``, ``EP@k``, ``EnDCG@k``) of one topic's run."""
    kind, cut = _measure(name)
    ranking = ranking_order(scores)
    if kind == "EAP":
        return expected_ap(ranking, probs)
    assert cut is not None
    if math.fsum(probs.values()) <= 0:
        return math.nan
    if kind == "EP":
        return expected_precision(ranking, probs, cut)
    return expected_ndcg(ranking, probs, cut)


@dataclass(frozen=True)
class ExpectedEvaluation:
    """Values of each expected measure per topic and their mean (``all``)."""

    measures: tuple[str, ...]
    per_topic: dict[str, dict[str, float]]
    mean: dict[str, float]

    def rows(self, *, per_topic: bool = True) -> Iterator[tuple[str, str, float]]:
        """``(measure, topic, value)``: topics in numeric order, then ``all``."""
        if per_topic:
            for qid in sorted(self.per_topic, key=topic_key):
                for name in self.measures:
                    yield (name, qid, self.per_topic[qid][name])
        for name in self.measures:
            yield (name, "all", self.mean.get(name, math.nan))


def run_expected(
    qrels: ProbQrels, run: Run, *, measures: Iterable[str] = EXPECTED_MEASURES
) -> ExpectedEvaluation:
    """Expected measures of ``run`` per topic of ``qrels`` with ``Σ p > 0``; a topic the
    run does not answer scores 0. The mean is over those topics."""
    names = tuple(measures)
    for name in names:
        _measure(name)
    per_topic: dict[str, dict[str, float]] = {}
    for qid in sorted(qrels, key=topic_key):
        probs = qrels[qid]
        if math.fsum(probs.values()) <= 0:
            continue
        scores = run.get(qid, {})
        per_topic[qid] = {n: topic_expected(n, scores, probs) for n in names}
    mean = {
        n: math.fsum(v[n] for v in per_topic.values()) / len(per_topic)
        if per_topic
        else math.nan
        for n in names
    }
    return ExpectedEvaluation(names, per_topic, mean)


def labels_merge(
    human: Mapping[str, Mapping[str, L]], inferred: Mapping[str, Mapping[str, L]]
) -> dict[str, dict[str, L]]:
    """``qid -> {docno: label}`` of ``inferred`` overlaid by ``human``: where a person
    judged a document, the human label wins; elsewhere the inferred one stands."""
    merged = {qid: dict(labels) for qid, labels in inferred.items()}
    for qid, labels in human.items():
        merged.setdefault(qid, {}).update(labels)
    return merged


def qrels_probabilities(
    human: Mapping[str, Mapping[str, int]],
    probabilities: Mapping[str, Mapping[str, float]],
    *,
    level: int = 1,
) -> dict[str, dict[str, float]]:
    """Probabilistic qrels: the human label (grade >= ``level`` is 1, else 0) where
    judged, the model's probability elsewhere (:func:`labels_merge`)."""
    binary = {
        q: {d: 1.0 if grade >= level else 0.0 for d, grade in labels.items()}
        for q, labels in human.items()
    }
    model = {
        q: {d: float(p) for d, p in docs.items()} for q, docs in probabilities.items()
    }
    return labels_merge(binary, model)
