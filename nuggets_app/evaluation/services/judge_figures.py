"""Figures from one automatic judge alone: its qrels, and each run's expected AP under it.

These are the judge's figures, never the default: the default estimate
(:mod:`nuggets_app.evaluation.services.estimates`) reads a judge only as evidence of
the relevance model, corrected by the people's sample. A judge's figures take its
calls at face value: a graded judge's grade (relevant at the collection's level), a
probability judge's P(relevant) (its qrels: relevant from 0.5), a score judge's call
from its threshold. A pair the judge did not label counts as not relevant.
"""

from __future__ import annotations

from nuggets_app.evaluation.selectors import collection_runs
from nuggets_app.evaluation.services import uncertainty
from nuggets_app.evaluation.services.diagnostics import Table
from nuggets_app.judges.selectors import judge_reading
from nuggets_app.models import Judge


def judge_probabilities(*, judge: Judge) -> dict[str, dict[str, float]]:
    """``{qid: {docno: P(relevant)}}`` under the judge alone: its probability of
    relevance (probability judges), else 1 / 0 from its call."""
    reading = judge_reading(judge=judge, level=judge.collection.relevance_level)
    if judge.kind == Judge.Kind.PROBABILITIES:
        return reading.values
    return {
        qid: {d: float(v >= reading.level) for d, v in docs.items()}
        for qid, docs in reading.values.items()
    }


def judge_qrels_text(*, judge: Judge) -> str:
    """The judge's labels as TREC qrels (``qid 0 docno grade``): a graded judge's
    grades, else 1 where it calls the document relevant and 0 elsewhere."""
    reading = judge_reading(judge=judge, level=judge.collection.relevance_level)
    lines = []
    for qid in sorted(reading.values):
        for docno, value in sorted(reading.values[qid].items()):
            grade = (
                int(value)
                if judge.kind == Judge.Kind.GRADED
                else int(value >= reading.level)
            )
            lines.append(f"{qid} 0 {docno} {grade}\n")
    return "".join(lines)


def judge_runs_expected(*, judge: Judge) -> Table:
    """Every run's expected measures (EAP first) under the judge alone."""
    results = uncertainty.runs_expected(
        runs=collection_runs(judge.collection),
        probabilities=judge_probabilities(judge=judge),
    )
    table = uncertainty.expected_table(results)
    return Table(f"judge-{judge.name}-expected", table.columns, table.rows)
