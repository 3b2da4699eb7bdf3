"""Subtopic (diversity) qrels and the diversity measures, Django-free.

Subtopic qrels follow the TREC Web diversity format, one line per (topic, subtopic,
document): ``qid subtopic docno rel``; the importers read them
(:func:`nuggets_app.importers.qrels.parse_qrels`, ``kind="subtopics"``). The measures are ir_measures' (its provider for
them is pyndeval, NIST's ``ndeval``): alpha-nDCG@k (alpha 0.5), ERR-IA@k and subtopic
recall@k, per topic and averaged over the topics of the qrels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import ir_measures

from nuggets_app.errors import DomainError

# qid -> subtopic -> docno -> grade
SubtopicQrels = Mapping[str, Mapping[str, Mapping[str, int]]]
Run = Mapping[str, Mapping[str, float]]
DIVERSITY_MEASURES = ("alpha_nDCG", "ERR_IA", "StRecall")


class DiversityError(DomainError):
    """Subtopic qrels cannot be read or used as given; the message says where."""


def subtopic_qrels_lines(qrels: SubtopicQrels) -> list[str]:
    """``qid subtopic docno rel`` lines sorted by qid (numeric first), subtopic, docno."""

    def key(text: str) -> tuple[int, int, str]:
        return (0, int(text), "") if text.isdigit() else (1, 0, text)

    lines = []
    for qid in sorted(qrels, key=key):
        for subtopic in sorted(qrels[qid], key=key):
            for docno in sorted(qrels[qid][subtopic]):
                lines.append(f"{qid} {subtopic} {docno} {qrels[qid][subtopic][docno]}")
    return lines


@dataclass
class DiversityEvaluation:
    """Per-topic values and means (over the qrels' topics the run answers)."""

    per_topic: dict[str, dict[str, float]]
    mean: dict[str, float]


def diversity_evaluate(
    qrels: SubtopicQrels, run: Run, k: int = 20
) -> DiversityEvaluation:
    """alpha-nDCG@k, ERR-IA@k and subtopic recall@k of ``run`` through ir_measures."""
    if k < 1:
        raise DiversityError(f"k must be >= 1, got {k}")
    measures = [
        ir_measures.alpha_nDCG @ k,
        ir_measures.ERR_IA @ k,
        ir_measures.StRecall @ k,
    ]
    q = [
        ir_measures.Qrel(qid, docno, grade, subtopic)
        for qid, subtopics in qrels.items()
        for subtopic, docs in subtopics.items()
        for docno, grade in docs.items()
    ]
    r = [
        ir_measures.ScoredDoc(qid, docno, score)
        for qid, docs in run.items()
        for docno, score in docs.items()
    ]
    per_topic: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(measures, q, r):
        per_topic.setdefault(metric.query_id, {})[str(metric.measure)] = float(
            metric.value
        )
    names = [str(m) for m in measures]
    mean = {
        name: sum(v[name] for v in per_topic.values()) / len(per_topic)
        if per_topic
        else 0.0
        for name in names
    }
    return DiversityEvaluation(per_topic=per_topic, mean=mean)
