"""Standard measures through ir_measures (trec_eval-backed), per topic and mean.

Qrels are ``qid -> {docno: rel}`` (``rel < 0`` marks pooled-but-unjudged documents, as
ir_measures expects for infAP), runs ``qid -> {docno: score}``. Measure names are
ir_measures' own (``AP``, ``P@10``, ``nDCG@10``, ``nDCG``, ``Rprec``, ``Bpref``,
``infAP``, ``Judged@10``, ...); the mean is ir_measures' aggregate, i.e. over the
topics present in both the run and the qrels, as trec_eval without ``-c``.

Also the matcher seen as a retrieval function: average precision of documents ranked
by a score against binary labels, ``AP = (1/R) Σ_{relevant at rank k} rel(k)/k`` with
``rel(k)`` the relevant documents in the top k and ``R`` all positively labelled ones.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import ir_measures

from nuggets_app.errors import DomainError
from nuggets_app.ir.prels import ranking_order, topic_key


class MeasureError(DomainError):
    """A measure name that is not one the evaluator knows; the message says why."""


DEFAULT_MEASURES = (
    "AP",
    "P@10",
    "nDCG@10",
    "nDCG",
    "Rprec",
    "Bpref",
    "infAP",
    "Judged@10",
)

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class RunEvaluation:
    """Values of each measure per topic and their mean (``all``)."""

    measures: tuple[str, ...]
    per_topic: dict[str, dict[str, float]]  # qid -> measure -> value
    mean: dict[str, float]  # measure -> value

    def rows(self, *, per_topic: bool = True) -> Iterator[tuple[str, str, float]]:
        """``(measure, topic, value)``: topics in numeric order, then ``all``."""
        if per_topic:
            for qid in sorted(self.per_topic, key=topic_key):
                values = self.per_topic[qid]
                for name in self.measures:
                    if name in values:
                        yield (name, qid, values[name])
        for name in self.measures:
            yield (name, "all", self.mean.get(name, math.nan))


MEASURES_KNOWN = (
    "a measure is an ir_measures name: AP, P@10, nDCG@10, nDCG, Rprec, Bpref, infAP, "
    "RR, R@100, Judged@10 (a cutoff after @, parameters in parentheses: "
    "P(rel=2)@10)"
)


def measures_parse(names: Iterable[str]) -> list[ir_measures.Measure]:
    """ir_measures objects for measure names; ``ValueError`` names a bad one and the
    known ones in one sentence of its own (ir_measures' parser text says how Python
    read it, not what to type)."""
    parsed = []
    for name in names:
        try:
            parsed.append(ir_measures.parse_measure(name))
        except (ValueError, NameError, SyntaxError, TypeError):
            raise MeasureError(f'unknown measure "{name}": {MEASURES_KNOWN}') from None
    return parsed


def run_evaluate(
    qrels: Qrels, run: Run, *, measures: Iterable[str] = DEFAULT_MEASURES
) -> RunEvaluation:
    """Evaluate ``run`` against ``qrels`` with ir_measures, per topic and mean."""
    parsed = measures_parse(measures)
    names = tuple(str(m) for m in parsed)
    qrels_d = {q: dict(docs) for q, docs in qrels.items()}
    run_d = {q: dict(docs) for q, docs in run.items()}
    per_topic: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(parsed, qrels_d, run_d):
        per_topic.setdefault(metric.query_id, {})[str(metric.measure)] = float(
            metric.value
        )
    aggregate = ir_measures.calc_aggregate(parsed, qrels_d, run_d)
    mean = {str(m): float(v) for m, v in aggregate.items()}
    return RunEvaluation(names, per_topic, mean)


def average_precision(ranking: Iterable[str], relevant: Iterable[str]) -> float:
    """AP of ``ranking`` against the set of ``relevant`` docnos, as trec_eval computes
    it: the precision at each relevant document's rank, summed and divided by R, the
    number of relevant documents (one never retrieved adds 0); 0 when R = 0."""
    wanted = set(relevant)
    if not wanted:
        return 0.0
    found, total = 0, 0.0
    for rank, docno in enumerate(ranking, start=1):
        if docno in wanted:
            found += 1
            total += found / rank
    return total / len(wanted)


def scored_ranking_ap(scores: Mapping[str, float], labels: Mapping[str, int]) -> float:
    """AP of the labelled documents ranked by ``scores`` (trec_eval tie-break).

    Only documents present in ``labels`` are ranked (the held-out judgments); a
    labelled-relevant document without a score is never retrieved and lowers AP.
    NaN when no label is positive.
    """
    relevant = {d for d, rel in labels.items() if rel > 0}
    if not relevant:
        return math.nan
    ranked = ranking_order({d: s for d, s in scores.items() if d in labels})
    return average_precision(ranked, relevant)


def scored_ranking_map(
    scores: Mapping[str, Mapping[str, float]], labels: Mapping[str, Mapping[str, int]]
) -> tuple[dict[str, float], float]:
    """Per-topic :func:`scored_ranking_ap` and its mean over topics with a relevant label.

    ``scores`` and ``labels`` are ``qid -> {docno: value}``; every labelled topic counts.
    """
    per_topic = {
        qid: scored_ranking_ap(scores.get(qid, {}), topic_labels)
        for qid, topic_labels in labels.items()
    }
    defined = [v for v in per_topic.values() if not math.isnan(v)]
    mean = sum(defined) / len(defined) if defined else math.nan
    return per_topic, mean
