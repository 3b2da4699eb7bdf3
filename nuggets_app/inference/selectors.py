"""Reads of matching jobs: the nuggets a job matches, and its scores per topic for the
job pages (relevant, non-relevant and unjudged documents, histograms, TP/FP curves).

Judged and relevant as in :mod:`nuggets_app.inference.services.rule_estimates`.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from matcher import NuggetSpec
from nuggets_app.ir.histograms import bin_index
from nuggets_app.judging.selectors import human_grades
from nuggets_app.models import (
    MatchJob,
    MatchResult,
    Nugget,
    Topic,
)


def topic_scores(job: MatchJob, topic: Topic) -> dict[str, list[tuple[int, float]]]:
    """The topic's (document id, score) pairs split into relevant, nonrelevant and
    unjudged, each by score descending then document id."""
    level = job.relevance_level
    grades = human_grades([topic.pk])
    groups: dict[str, list[tuple[int, float]]] = {
        "relevant": [],
        "nonrelevant": [],
        "unjudged": [],
    }
    rows = MatchResult.objects.filter(job=job, topic=topic).values_list(
        "document_id", "score"
    )
    for doc_id, score in rows:
        grade = grades.get((topic.pk, doc_id))
        if grade is None:
            key = "unjudged"
        else:
            key = "relevant" if grade >= level else "nonrelevant"
        groups[key].append((doc_id, score))
    for values in groups.values():
        values.sort(key=lambda p: (-p[1], p[0]))
    return groups


def score_histograms(
    groups: dict[str, list[tuple[int, float]]], bins: int = 10
) -> dict[str, Any]:
    """Counts per score bin on [0, 1] (bin b holds b/B <= score < (b+1)/B; a score of
    1 falls in the last bin) for each group."""
    edges = [b / bins for b in range(bins + 1)]
    counts = {}
    for name, pairs in groups.items():
        row = [0] * bins
        for _, score in pairs:
            row[bin_index(score, bins) if score > 0 else 0] += 1
        counts[name] = row
    return {"edges": edges, "counts": counts}


def tp_fp_curve(
    groups: dict[str, list[tuple[int, float]]],
) -> list[tuple[float, int, int]]:
    """(threshold, relevant found, non-relevant found) as the threshold falls through
    every distinct score of the judged documents; tied scores enter together."""
    judged = [(s, True) for _, s in groups["relevant"]] + [
        (s, False) for _, s in groups["nonrelevant"]
    ]
    judged.sort(key=lambda p: -p[0])
    curve: list[tuple[float, int, int]] = []
    tp = fp = 0
    for i, (score, relevant) in enumerate(judged):
        tp += relevant
        fp += not relevant
        if i + 1 == len(judged) or judged[i + 1][0] != score:
            curve.append((score, tp, fp))
    return curve


def nuggets_kept(qs: QuerySet, job: MatchJob) -> QuerySet:
    """The nuggets of ``qs`` that the job's nugget filter keeps. An assessor's nuggets
    and imported banks' nuggets are matched alike."""
    f = job.nugget_filter or {}
    if f.get("assessors") or f.get("banks"):
        qs = qs.filter(
            Q(assessor_id__in=f.get("assessors") or [])
            | Q(bank_id__in=f.get("banks") or [])
        )
    if f.get("grades"):
        qs = qs.filter(grade__in=f["grades"])
    if f.get("aspects"):
        qs = qs.filter(aspect__in=f["aspects"])
    return qs


def job_nugget_sources(job: MatchJob) -> list[tuple[str, int]]:
    """Where a matching job's nuggets come from: ``(provenance, count)`` per assessor
    ("alice") and per imported bank ("imported from FILE"), largest first."""
    from django.db.models import Count

    qs = nuggets_kept(Nugget.objects.filter(topic__in=job.topics.all()), job)
    rows = qs.values("assessor__username", "bank__source_file").annotate(n=Count("pk"))
    sources = []
    for row in rows:
        if row["bank__source_file"] is not None:
            name = row["bank__source_file"].rsplit("/", 1)[-1]
            sources.append((f"imported from {name}", row["n"]))
        else:
            sources.append((row["assessor__username"] or "", row["n"]))
    return sorted(sources, key=lambda s: (-s[1], s[0]))


def job_nuggets(job: MatchJob, topic_id: int):
    """The nuggets of a topic that the job's nugget filter keeps, by primary key."""
    return nuggets_kept(Nugget.objects.filter(topic_id=topic_id), job).order_by("pk")


def job_nugget_specs(job: MatchJob, topic_id: int) -> list[NuggetSpec]:
    """The matcher's view of the job's nuggets for a topic (id = nugget primary key)."""
    return [
        NuggetSpec(
            id=str(n.pk), text=n.text, keywords=tuple(n.keywords or ()), grade=n.grade
        )
        for n in job_nuggets(job, topic_id)
    ]
