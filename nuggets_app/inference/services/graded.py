"""Inferred graded qrels of a matching job: from the nuggets a document matches, or
from an ordinal relevance model fitted on the judged grades.

The rules are in :mod:`nuggets_app.ir.graded`. ``nuggets``: a nugget's grade is its
own, else the grade its assessor gave its source document (simulated and highlighted
nuggets carry none), and its strength the job's min-span score at the job's lambda.
``model``: the job's stored features (those of the binary model) fitted once per
grade level ``g`` on the judged documents labelled ``grade >= g`` (weighted by the
sample's inverse inclusion probabilities, like the binary fit), read as
``P(grade >= g)``. Human grades always override inferred ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from nuggets_app.errors import DomainError
from nuggets_app.importers.fields import qid_key
from nuggets_app.inference.services.evidence import evidence_nugget_scores
from nuggets_app.inference.services.exports import Export, ExportError
from nuggets_app.inference.services.job_model import (
    _sample_weights,
    fit_sample,
    job_features,
    sample_fully_judged,
)
from nuggets_app.ir import graded as graded_ir
from nuggets_app.judging.selectors import human_grades
from nuggets_app.learning import relevance_features, relevance_model
from nuggets_app.models import (
    Document,
    Judgment,
    MatchChunk,
    MatchJob,
    MatchResult,
    Nugget,
    Topic,
)

GRADED_SOURCES = ("model", "nuggets")


def job_levels(job: MatchJob) -> list[int]:
    """The positive grades of the job's scale: the collection's and the judged ones."""
    values = {g["value"] for g in job.collection.grades if g["value"] > 0}
    values |= set(
        Judgment.objects.filter(topic__match_jobs=job, relevance__gt=0)
        .values_list("relevance", flat=True)
        .distinct()
    )
    return sorted(values)


def job_ordinal(
    *, job: MatchJob
) -> tuple[list[int], dict[int, dict[int, graded_ir.Ordinal]]]:
    """(levels, {topic id: {document id: Ordinal}}) for every document of the job."""
    features = job_features(job)
    qids = dict(Topic.objects.filter(pk__in=list(features)).values_list("pk", "qid"))
    grades = human_grades(features)
    design = fit_sample(job)
    weights = _sample_weights(design, features, qids)
    anchor = weights is not None and sample_fully_judged(
        design,
        features,
        {
            t: np.array([-1 if grades.get((t, d)) is None else 0 for d in ids.tolist()])
            for t, (ids, _) in features.items()
        },
    )
    levels = job_levels(job)
    per_level: list[dict[str, np.ndarray]] = []
    for level in levels:
        data = {}
        for topic_id, (ids, matrix) in features.items():
            labels = np.array(
                [
                    -1 if (g := grades.get((topic_id, d))) is None else int(g >= level)
                    for d in ids.tolist()
                ],
                dtype=np.int64,
            )
            data[qids[topic_id]] = (matrix, labels)
        try:
            # Anchored per level to the sample's estimate of the documents at or
            # above it (see job_model.job_model_fit).
            pool_relevant = (
                relevance_model.horvitz_thompson_relevant(
                    {q: y for q, (_, y) in data.items()}, weights
                )
                if anchor and weights is not None
                else None
            )
            model = relevance_model.model_fit(
                data, weights=weights, pool_relevant=pool_relevant
            )
            predicted = relevance_model.model_predict(model, data)
        except relevance_features.RelevanceModelError:
            # No judged document reaches this level: nothing is predicted to.
            predicted = {q: np.zeros(len(m)) for q, (m, _) in data.items()}
        per_level.append({q: np.asarray(p, dtype=float) for q, p in predicted.items()})
    out: dict[int, dict[int, graded_ir.Ordinal]] = {}
    for topic_id, (ids, _) in features.items():
        qid = qids[topic_id]
        out[topic_id] = {
            d: graded_ir.Ordinal.from_levels(
                [min(max(float(p[qid][i]), 0.0), 1.0) for p in per_level]
            )
            for i, d in enumerate(ids.tolist())
        }
    return levels, out


def job_nugget_grades(
    *, job: MatchJob, threshold: float = 0.5, strong: float = 0.8
) -> dict[int, dict[int, int]]:
    """{topic id: {document id: grade}} by :func:`nuggets_app.ir.graded.nugget_grade`."""
    levels = job_levels(job)
    top = max(levels) if levels else 1
    judged = {
        (t, d): g
        for t, d, g in Judgment.objects.filter(
            topic__match_jobs=job, relevance__isnull=False
        ).values_list("topic_id", "document_id", "relevance")
    }
    nugget_grades = {
        pk: g if g is not None else judged.get((t, d), 1)
        for pk, t, d, g in Nugget.objects.filter(topic__match_jobs=job).values_list(
            "pk", "topic_id", "document_id", "grade"
        )
    }
    out: dict[int, dict[int, int]] = {}
    chunks = MatchChunk.objects.filter(job=job, packed_evidence__isnull=False)
    for topic_id, blob in chunks.values_list("topic_id", "packed_evidence"):
        for doc_id, scores in evidence_nugget_scores(bytes(blob), job.lam).items():
            matches = {
                n: (nugget_grades.get(n, 1), s) for n, s in scores.items() if s > 0
            }
            out.setdefault(topic_id, {})[doc_id] = graded_ir.nugget_grade(
                matches, threshold=threshold, strong=strong, max_grade=top
            )
    for topic_id, doc_id in MatchResult.objects.filter(job=job).values_list(
        "topic_id", "document_id"
    ):
        out.setdefault(topic_id, {}).setdefault(doc_id, 0)
    return out


def graded_export(
    *,
    job: MatchJob,
    source: str = "model",
    topics: Iterable[Topic] | None = None,
    threshold: float = 0.5,
    strong: float = 0.8,
) -> Export:
    """TREC qrels with inferred grades (human grades override), one line per document
    of the job, and a provenance sidecar: per line the source, and for the model the
    per-grade probabilities and the expected gain (the grade's value as its gain)."""
    if source not in GRADED_SOURCES:
        raise ExportError(
            f"graded source must be one of {', '.join(GRADED_SOURCES)}, got {source!r}"
        )
    if job.status != MatchJob.Status.DONE:
        raise ExportError(f"job {job.pk} is {job.status}, not done")
    wanted = None if topics is None else {t.pk for t in topics}
    qids = dict(Topic.objects.filter(match_jobs=job).values_list("pk", "qid"))
    if wanted is not None:
        qids = {t: q for t, q in qids.items() if t in wanted}
    records: dict[tuple[int, int], dict[str, Any]] = {}
    levels = job_levels(job)
    if source == "model":
        try:
            levels, ordinal = job_ordinal(job=job)
        except DomainError as exc:
            raise ExportError(f"job {job.pk}: {exc}") from exc
        for topic_id, docs in ordinal.items():
            for doc_id, o in docs.items():
                records[(topic_id, doc_id)] = {
                    "rel": levels[o.median_grade() - 1] if o.median_grade() else 0,
                    "source": "model",
                    "p_grade": [round(p, 6) for p in o.grade_probabilities()],
                    "expected_gain": round(o.expected_gain([0, *levels]), 6),
                }
    else:
        for topic_id, docs in job_nugget_grades(
            job=job, threshold=threshold, strong=strong
        ).items():
            for doc_id, grade in docs.items():
                records[(topic_id, doc_id)] = {"rel": grade, "source": "nuggets"}
    records = {k: v for k, v in records.items() if k[0] in qids}
    for key, grade in human_grades(qids).items():
        records[key] = {"rel": grade, "source": "person", "expected_gain": grade}
    docnos = dict(
        Document.objects.filter(pk__in={d for _, d in records}).values_list(
            "pk", "docno"
        )
    )
    rows = sorted(
        ((qids[t], docnos[d], rec) for (t, d), rec in records.items()),
        key=lambda r: (qid_key(r[0]), r[1]),
    )
    provenance = {
        "format": "trec-qrels",
        "columns": "qid iter docno rel",
        "kind": "graded",
        "source": source,
        "collection": job.collection.name,
        "job": job.pk,
        "levels": [0, *levels],
        "rule": {"threshold": threshold, "strong": strong}
        if source == "nuggets"
        else {"grade": "median of the ordinal model"},
        "counts": {
            "lines": len(rows),
            "person": sum(r[2]["source"] == "person" for r in rows),
            "by_grade": {
                str(g): sum(r[2]["rel"] == g for r in rows) for g in [0, *levels]
            },
        },
        "lines": [{"qid": q, "docno": d, **rec} for q, d, rec in rows],
    }
    return Export(
        lines=[f"{q} 0 {d} {rec['rel']}" for q, d, rec in rows],
        provenance=provenance,
    )


def job_expected_gains(job: MatchJob) -> dict[str, dict[str, float]]:
    """Graded probabilistic qrels of a done job, ``{qid: {docno: expected gain}}``: a
    judged document's grade, an unjudged one's expected gain under the ordinal model
    (``Σ_g P(grade = g) · g``), the gains of expected nDCG. The same figures as the
    ``expected_gain`` of the graded export's sidecar."""
    export = graded_export(job=job, source="model")
    gains: dict[str, dict[str, float]] = {}
    for line in export.provenance["lines"]:
        gains.setdefault(line["qid"], {})[line["docno"]] = float(line["expected_gain"])
    return gains
