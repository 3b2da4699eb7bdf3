"""Scoring documents that a finished job never matched: a new run's unpooled documents.

A run that did not contribute to the pool retrieves documents the job never scored.
:func:`unpooled_score` scores them as the job's chunks score theirs (the matcher
against the job's nuggets, the relevance model's raw features with the job's *stored*
corpus statistics and its topics' evidence), and keeps one :class:`UnpooledScore` row
per (job, topic, document), so a second evaluation reads them and matches nothing.
With the semantic extra the same task stores the documents' embeddings, so that a
model fitted with the semantic features reads them as it reads the pooled ones
(:mod:`nuggets_app.inference.services.job_semantic`; the columns are computed when
read, with the judgments of then).

:func:`unpooled_ensure` scores what is missing: in this process when there are at
most ``UNPOOLED_INLINE`` documents, else in batches of ``UNPOOLED_BATCH`` documents of
one topic sent to the Celery workers (task ``unpooled_score``; an upsert, safe to run
twice). :func:`unpooled_progress` says how many of the wanted rows exist.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from django.db import transaction

from matcher import TopicMatcher
from nuggets_app.errors import DomainError
from nuggets_app.inference.selectors import job_nugget_specs
from nuggets_app.inference.services import embeddings
from nuggets_app.inference.services.corpus_stats import (
    job_options,
    job_stats_ensure,
    title_terms,
)
from nuggets_app.inference.services.job_judges import model_judges, with_judges
from nuggets_app.inference.services.job_model import (
    chunk_features_pack,
    features_unpack,
    job_features,
    stored_semantic,
)
from nuggets_app.inference.services.job_semantic import with_semantic
from nuggets_app.learning.relevance_model import RelevanceModel
from nuggets_app.learning.unpooled import predict_beside_pool
from nuggets_app.models import Document, JobInference, MatchJob, Topic, UnpooledScore
from nuggets_app.operations import queue

UNPOOLED_INLINE = 500
UNPOOLED_BATCH = 200

Wanted = Mapping[int, Sequence[int]]  # topic id -> document ids


class UnpooledError(DomainError):
    """Unpooled documents cannot be scored as asked; the message says why."""


@dataclass(frozen=True)
class UnpooledProgress:
    """How many of the wanted (topic, document) rows are scored."""

    wanted: int
    scored: int
    queued_batches: int = 0

    @property
    def done(self) -> bool:
        return self.scored >= self.wanted


def _check(job: MatchJob) -> None:
    if job.status != MatchJob.Status.DONE:
        raise UnpooledError(
            f"job {job.pk} is {job.status}: only a finished job scores new documents"
        )


def features_lam(job: MatchJob) -> float:
    """The lambda the job's chunks computed their features with: a re-scoring
    (:func:`match_job_rescore`) replaces the scores, not the stored features, so
    documents scored later are described with the first scoring's lambda, as the pool
    is."""
    history = job.rescorings or []
    return float(history[0]["previous_lam"]) if history else job.lam


def unpooled_score(*, job: MatchJob, topic_id: int, document_ids: Sequence[int]) -> int:
    """Score these documents for one topic of the job and upsert their rows; the
    number of rows written (a vanished document is skipped)."""
    _check(job)
    job_stats_ensure(job=job)
    options = job_options(job)
    matcher = TopicMatcher(job_nugget_specs(job, topic_id), options)
    lam = features_lam(job)
    rows = Document.objects.filter(pk__in=list(document_ids)).values_list(
        "pk", "docno", "title", "text"
    )
    scored: list[tuple[int, float, int | None]] = []
    described = []
    for pk, docno, title, text in rows:
        prepared = matcher.prepare(text)
        match = matcher.score_prepared(prepared)
        terms = title_terms(title, text, options) + list(prepared.terms)
        minspan = {item.nugget: item.score(lam) for item in match.evidence.nuggets}
        described.append((pk, docno, terms, minspan))
        nugget = int(match.nugget) if match.nugget is not None else None
        scored.append((pk, float(match.score), nugget))
    if not scored:
        return 0
    if embeddings.semantic_on():
        embeddings.documents_embed_missing(document_ids=[pk for pk, _, _ in scored])
    blob = chunk_features_pack(job=job, topic_id=topic_id, documents=described)
    ids, matrix = features_unpack(blob)
    objects = [
        UnpooledScore(
            job=job,
            topic_id=topic_id,
            document_id=pk,
            score=score,
            nugget_id=nugget,
            features=np.ascontiguousarray(matrix[i], dtype="<f8").tobytes(),
        )
        for i, (pk, score, nugget) in enumerate(scored)
        if int(ids[i]) == pk
    ]
    UnpooledScore.objects.bulk_create(
        objects,
        batch_size=1000,
        update_conflicts=True,
        unique_fields=["job", "topic", "document"],
        update_fields=["score", "nugget_id", "features"],
    )
    return len(objects)


def unpooled_missing(*, job: MatchJob, wanted: Wanted) -> dict[int, list[int]]:
    """The wanted (topic, document) pairs without a row yet, by topic."""
    have: dict[int, set[int]] = {}
    rows = UnpooledScore.objects.filter(job=job, topic_id__in=list(wanted)).values_list(
        "topic_id", "document_id"
    )
    for topic_id, doc_id in rows.iterator(chunk_size=5000):
        have.setdefault(topic_id, set()).add(doc_id)
    out = {}
    for topic_id, docs in wanted.items():
        missing = sorted(set(docs) - have.get(topic_id, set()))
        if missing:
            out[topic_id] = missing
    return out


def unpooled_progress(*, job: MatchJob, wanted: Wanted) -> UnpooledProgress:
    """How many of the wanted pairs are scored."""
    total = sum(len(set(d)) for d in wanted.values())
    missing = unpooled_missing(job=job, wanted=wanted)
    return UnpooledProgress(total, total - sum(len(d) for d in missing.values()))


def unpooled_ensure(
    *,
    job: MatchJob,
    wanted: Wanted,
    inline_max: int = UNPOOLED_INLINE,
    enqueue: bool = True,
) -> UnpooledProgress:
    """Score the wanted pairs not scored yet: here when at most ``inline_max``, else
    as batches on the workers (the result then says how many were queued; none
    without ``enqueue``: a page polling batches sent before)."""
    _check(job)
    missing = unpooled_missing(job=job, wanted=wanted)
    count = sum(len(d) for d in missing.values())
    total = sum(len(set(d)) for d in wanted.values())
    if count and count <= inline_max:
        for topic_id, docs in missing.items():
            for start in range(0, len(docs), UNPOOLED_BATCH):
                unpooled_score(
                    job=job,
                    topic_id=topic_id,
                    document_ids=docs[start : start + UNPOOLED_BATCH],
                )
        return UnpooledProgress(total, total)
    if not count:
        return UnpooledProgress(total, total)
    if not enqueue:
        return UnpooledProgress(total, total - count)
    batches = [
        (topic_id, docs[start : start + UNPOOLED_BATCH])
        for topic_id, docs in sorted(missing.items())
        for start in range(0, len(docs), UNPOOLED_BATCH)
    ]

    def send() -> None:
        for topic_id, docs in batches:
            queue.task_enqueue(queue.UNPOOLED_SCORE, job.pk, topic_id, docs)

    transaction.on_commit(send)
    return UnpooledProgress(total, total - count, queued_batches=len(batches))


def unpooled_features(
    *, job: MatchJob, wanted: Wanted, semantic: bool = False
) -> dict[int, tuple[list[int], np.ndarray]]:
    """{topic id: (document ids, raw feature matrix)} of the scored wanted pairs;
    ``semantic``: with the semantic columns appended (a model fitted with them)."""
    found = _stored_features(job, wanted)
    return with_semantic(job, found) if semantic and found else found


def _stored_features(
    job: MatchJob, wanted: Wanted
) -> dict[int, tuple[list[int], np.ndarray]]:
    return _features_by_topic(
        itertools.chain.from_iterable(
            UnpooledScore.objects.filter(
                job=job, topic_id=topic_id, document_id__in=list(docs)
            )
            .values_list("topic_id", "document_id", "features")
            .iterator(chunk_size=5000)
            for topic_id, docs in wanted.items()
        )
    )


def _features_by_topic(
    rows: Iterable[tuple[int, int, bytes]],
) -> dict[int, tuple[list[int], np.ndarray]]:
    """(topic id, document id, packed features) rows grouped by topic, in row order."""
    found: dict[int, tuple[list[int], list[np.ndarray]]] = {}
    for topic_id, doc_id, blob in rows:
        ids, vectors = found.setdefault(topic_id, ([], []))
        ids.append(doc_id)
        vectors.append(np.frombuffer(bytes(blob), dtype="<f8"))
    return {t: (ids, np.vstack(vectors)) for t, (ids, vectors) in found.items()}


# --- documents added after a job --------------------------------------------------------
def new_documents_wanted(*, job: MatchJob) -> dict[int, list[int]]:
    """Every (topic of the job, document of the collection imported after the job
    was launched: id above ``job.documents_before``, or above the job's own largest
    document id for a job from before that was kept): what matching a job's new
    documents scores."""
    before = job.documents_before
    if before is None:
        before = max(
            (
                max(ids)
                for ids in job.chunks.values_list("document_ids", flat=True)
                if ids
            ),
            default=0,
        )
    docs = sorted(
        Document.objects.filter(
            collection_id=job.collection_id, pk__gt=before
        ).values_list("pk", flat=True)
    )
    if not docs:
        return {}
    return {t: docs for t in sorted(job.topics.values_list("pk", flat=True))}


def new_documents_score(*, job: MatchJob, enqueue: bool = True) -> UnpooledProgress:
    """Score the documents added after the finished job for its topics, in batches
    of ``UNPOOLED_BATCH`` on the workers (in this process without a broker): only
    the pairs not scored yet, so calling it again resumes. Their rows are the job's
    unpooled scores: a run that retrieves them is evaluated without matching."""
    _check(job)
    wanted = new_documents_wanted(job=job)
    return unpooled_ensure(job=job, wanted=wanted, inline_max=0, enqueue=enqueue)


def new_documents_progress(*, job: MatchJob) -> UnpooledProgress:
    """How many of the documents added after the job are scored for it (pairs)."""
    return unpooled_progress(job=job, wanted=new_documents_wanted(job=job))


# --- what exports add for the documents scored after the job -----------------------
def later_columns(
    *, job: MatchJob, on_model: bool, topics: Sequence[int] | None = None
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """{topic id: (document ids, values)} of every document scored for the finished
    job after it ran (its :class:`UnpooledScore` rows: documents added to the
    collection later, new runs' unpooled documents). ``on_model``: the job's fitted
    model's p, the document z-scored beside the topic's pool as
    :func:`nuggets_app.learning.unpooled.predict_beside_pool` does ({} without a fitted
    model); else the min-span score, as the job's own results have it."""
    rows = UnpooledScore.objects.filter(job=job).order_by("topic_id", "document_id")
    if topics is not None:
        rows = rows.filter(topic_id__in=list(topics))
    if not on_model:
        scores: dict[int, tuple[list[int], list[float]]] = {}
        for topic_id, doc_id, score in rows.values_list(
            "topic_id", "document_id", "score"
        ).iterator(chunk_size=5000):
            ids, values = scores.setdefault(topic_id, ([], []))
            ids.append(doc_id)
            values.append(score)
        return {
            t: (np.array(ids, dtype=np.int64), np.array(v, dtype=float))
            for t, (ids, v) in scores.items()
        }
    found = _features_by_topic(
        rows.values_list("topic_id", "document_id", "features").iterator(
            chunk_size=5000
        )
    )
    stored = JobInference.objects.filter(job=job, model__isnull=False).first()
    if stored is None or not found:
        return {}
    model = RelevanceModel.from_json(json.dumps(stored.model))
    pool = job_features(job)
    if stored_semantic(stored.model):
        # The model reads the semantic columns too: the pool's and these documents'.
        pool = with_semantic(job, {t: f for t, f in pool.items() if t in found})
        found = with_semantic(job, found)
    judges = model_judges(stored.model)
    if judges:
        # And the automatic judges' columns, by docno (labels beyond the pool count).
        qids = dict(Topic.objects.filter(pk__in=list(found)).values_list("pk", "qid"))
        pool = {t: f for t, f in pool.items() if t in found}
        pool = with_judges(job, pool, qids, judges)[0]
        found = with_judges(job, found, qids, judges)[0]
    return {
        topic_id: (
            np.array(ids, dtype=np.int64),
            predict_beside_pool(model, pool[topic_id][1], matrix),
        )
        for topic_id, (ids, matrix) in found.items()
        if topic_id in pool
    }
