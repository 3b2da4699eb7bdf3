"""Re-scoring a whole job for a new lambda from its packed evidence."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC

import numpy as np
from django.db import connection, transaction
from django.utils import timezone

from matcher import MatchOptions, TopicMatcher
from nuggets_app.inference.selectors import job_nugget_specs
from nuggets_app.inference.services.evidence import evidence_rescore
from nuggets_app.models import (
    MatchChunk,
    MatchJob,
    MatchResult,
)

from .base import RESULT_BATCH, MatchJobError, Status
from .chunks import matcher_cache_clear


@dataclass
class RescoreSummary:
    """What a re-scoring changed."""

    results: int
    changed: int
    seconds: float


def match_job_rescore(*, job: MatchJob, lam: float) -> RescoreSummary:
    """Recompute every result's score and best nugget for a new lambda from the stored
    evidence (no document is read), and make it the job's lambda."""
    if not 0 < lam <= 1:
        raise MatchJobError(f"lambda must be in (0, 1], got {lam!r}")
    if job.status != Status.DONE:
        raise MatchJobError(f"job {job.pk} is {job.status}; re-score a finished job")
    started = time.perf_counter()
    blobs = list(
        MatchChunk.objects.filter(job=job).values_list("topic_id", "packed_evidence")
    )
    if any(blob is None for _, blob in blobs):
        raise MatchJobError(
            f"job {job.pk} has chunks without stored evidence; re-run it"
        )
    packed = [bytes(blob) for _, blob in blobs]
    # The stored scores are the evidence scored with the job's lambda, bit for bit, so
    # comparing both in memory finds the rows to write without reading them.
    old = _flatten(blobs, evidence_rescore(packed, job.lam))
    new = _flatten(blobs, evidence_rescore(packed, lam))
    dirty = (old["score"] != new["score"]) | (old["nugget"] != new["nugget"])
    with transaction.atomic():
        changed = _scores_write(job, {key: col[dirty] for key, col in new.items()})
        # Each scoring is numbered and dated, so an evaluation or export can say which
        # one it used (the scores themselves are replaced).
        history = [
            *(job.rescorings or []),
            {
                "lam": lam,
                "previous_lam": job.lam,
                "changed": changed,
                "at": timezone.now().astimezone(UTC).isoformat(timespec="seconds"),
            },
        ]
        MatchJob.objects.filter(pk=job.pk).update(lam=lam, rescorings=history)
    job.lam = lam
    job.rescorings = history
    matcher_cache_clear()
    return RescoreSummary(
        results=len(new["doc"]), changed=changed, seconds=time.perf_counter() - started
    )


def _flatten(blobs, rescored) -> dict[str, np.ndarray]:
    """One array per column over all chunks: topic, doc, score, nugget (-1: none)."""
    parts: dict[str, list[np.ndarray]] = {
        "topic": [],
        "doc": [],
        "score": [],
        "nugget": [],
    }
    for (topic_id, _), (doc_ids, scores, nuggets) in zip(blobs, rescored, strict=True):
        parts["topic"].append(np.full(len(doc_ids), topic_id, dtype=np.int64))
        parts["doc"].append(doc_ids)
        parts["score"].append(scores)
        parts["nugget"].append(nuggets)
    empty = {
        "topic": np.int64,
        "doc": np.int64,
        "score": np.float64,
        "nugget": np.int64,
    }
    return {
        key: np.concatenate(cols) if cols else np.zeros(0, dtype=empty[key])
        for key, cols in parts.items()
    }


def _scores_write(job: MatchJob, rows: dict[str, np.ndarray]) -> int:
    """Write the new (score, nugget) of the given rows; a changed nugget drops the
    stored spans (the document page recomputes them)."""
    if not len(rows["doc"]):
        return 0
    topics, docs = rows["topic"].tolist(), rows["doc"].tolist()
    scores = rows["score"].tolist()
    nuggets = [n if n >= 0 else None for n in rows["nugget"].tolist()]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                """
                UPDATE nuggets_app_matchresult AS r
                SET score = v.score, nugget_id = v.nugget,
                    spans = CASE WHEN r.nugget_id IS DISTINCT FROM v.nugget
                                 THEN '[]'::jsonb ELSE r.spans END
                FROM unnest(%s::bigint[], %s::bigint[], %s::float8[], %s::bigint[])
                     AS v(topic, doc, score, nugget)
                WHERE r.job_id = %s AND r.topic_id = v.topic AND r.document_id = v.doc
                """,
                [topics, docs, scores, nuggets, job.pk],
            )
            return cursor.rowcount
    current = {
        (r.topic_id, r.document_id): r for r in MatchResult.objects.filter(job=job)
    }
    dirty = []
    for topic, doc, score, nugget in zip(topics, docs, scores, nuggets, strict=True):
        row = current.get((topic, doc))
        if row is not None:
            if row.nugget_id != nugget:
                row.spans = []
            row.score, row.nugget_id = score, nugget
            dirty.append(row)
    MatchResult.objects.bulk_update(
        dirty, ["score", "nugget", "spans"], batch_size=RESULT_BATCH
    )
    return len(dirty)


def result_spans(result: MatchResult) -> list[list[int]]:
    """Highlight spans of a result's best nugget, matching its one document again
    (stored spans are dropped when re-scoring changes the best nugget)."""
    if result.nugget_id is None:
        return []
    job = result.job
    options = MatchOptions(k=job.k, lam=job.lam, stem=job.stem, stopwords=job.stopwords)
    specs = [
        s
        for s in job_nugget_specs(job, result.topic_id)
        if s.id == str(result.nugget_id)
    ]
    if not specs:
        return []
    match = TopicMatcher(specs, options).score(result.document.text)
    return [list(span) for span in match.spans]
