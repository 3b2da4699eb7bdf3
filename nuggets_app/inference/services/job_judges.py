"""Automatic judges' grades as features of a job's relevance model.

Every judge of the job's collection gives the model two columns
(:func:`nuggets_app.learning.ablation.judge_feature_names`): its value for the pair
(a graded judge's grade, a probability judge's P(relevant at the job's level), a
score judge's score; :func:`nuggets_app.judges.selectors.judge_values`) and 1 where it
did not label the pair (the value is then 0). Each judge is a feature family
(``judge:NAME``), kept by a fit only where the job's held-out log-loss says it pays
(:mod:`nuggets_app.learning.family_choice`), as the nugget family is. The
model-assisted estimate keeps its residual correction over the people's sample: a
judge that is noise costs width, never the centre.

A fit that reads a judge marks it used (:func:`nuggets_app.judges.services.judge_mark_used`):
its labels are then kept as read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nuggets_app.judges.selectors import judge_values
from nuggets_app.judges.services import judge_mark_used
from nuggets_app.learning.ablation import JUDGE_PREFIX, judge_feature_names
from nuggets_app.learning.relevance_features import RelevanceModelError
from nuggets_app.models import Document, JobInference, Judge, MatchJob

Features = dict[int, tuple[np.ndarray, np.ndarray]]


def collection_judge_names(job: MatchJob) -> tuple[str, ...]:
    """The names of the judges of the job's collection that gave labels."""
    return tuple(
        Judge.objects.filter(collection_id=job.collection_id, labels__isnull=False)
        .distinct()
        .order_by("name")
        .values_list("name", flat=True)
    )


def model_judges(model: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The judges whose columns a stored model (its JSON) has, in column order."""
    suffix = ":value"
    return tuple(
        name[len(JUDGE_PREFIX) : -len(suffix)]
        for name in (model or {}).get("feature_names", ())
        if name.startswith(JUDGE_PREFIX) and name.endswith(suffix)
    )


def stored_judges(job: MatchJob) -> tuple[str, ...]:
    """The judges the job's stored fit read (() without a fit)."""
    model = (
        JobInference.objects.filter(job=job, model__isnull=False)
        .values_list("model", flat=True)
        .first()
    )
    return model_judges(model)


def with_judges(
    job: MatchJob, features: Features, qids: dict[int, str], names: Sequence[str]
) -> tuple[Features, tuple[str, ...], list[dict[str, Any]]]:
    """``features`` with two columns per judge of ``names`` appended, the columns'
    names, and what was read of each judge (name, kind, model, its labels and those
    of the job's pairs)."""
    if not names:
        return features, (), []
    judges = {j.name: j for j in Judge.objects.filter(collection_id=job.collection_id)}
    missing = [n for n in names if n not in judges]
    if missing:
        raise RelevanceModelError(
            f"the collection has no judge {missing[0]!r} (the job's model read it)"
        )
    doc_ids = {int(d) for ids, _ in features.values() for d in ids.tolist()}
    docnos = dict(Document.objects.filter(pk__in=doc_ids).values_list("pk", "docno"))
    columns: dict[int, list[np.ndarray]] = {t: [] for t in features}
    column_names: list[str] = []
    read: list[dict[str, Any]] = []
    for name in names:
        judge = judges[name]
        values = judge_values(judge=judge, level=job.relevance_level)
        matched = 0
        for topic_id, (ids, _) in features.items():
            by_doc = values.get(qids[topic_id], {})
            got = [by_doc.get(docnos.get(int(d), "")) for d in ids.tolist()]
            value = np.array([v if v is not None else 0.0 for v in got], dtype=float)
            absent = np.array([v is None for v in got], dtype=float)
            matched += int(len(got) - absent.sum())
            columns[topic_id] += [value, absent]
        column_names += judge_feature_names(name)
        read.append(
            {
                "name": name,
                "kind": judge.kind,
                "model": judge.model,
                "labels": sum(len(v) for v in values.values()),
                "pairs": matched,
            }
        )
    out = {
        t: (ids, np.column_stack([matrix, *columns[t]]))
        for t, (ids, matrix) in features.items()
    }
    return out, tuple(column_names), read


def judges_mark_read(*, job: MatchJob, names: Sequence[str]) -> None:
    """Mark the judges a fit of ``job`` read as used: their labels stay as read."""
    for judge in Judge.objects.filter(collection_id=job.collection_id, name__in=names):
        judge_mark_used(judge=judge, by=f"the relevance model of job {job.pk}")
