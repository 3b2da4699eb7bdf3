"""Celery entry points of matching jobs: each task takes ids and plain values, calls
one service and returns a small summary. Services send them by name through
:mod:`nuggets_app.operations.queue`; callers that import them use a ``_task`` suffix."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from nuggets_app.inference.services import (
    embeddings,
    job_model,
    matching,
    rounds,
    unpooled,
)
from nuggets_app.learning import relevance_features
from nuggets_app.operations import queue

# Retries of one message while the database is unreachable: with the backoff capped
# at 60 s this rides out about 15 minutes of outage; past it the chunk is left to the
# supervisor, which re-queues chunks nobody holds.
RECONNECT_RETRIES = 20


@shared_task(
    name=queue.MATCH_CHUNK,
    bind=True,
    ignore_result=True,
    max_retries=RECONNECT_RETRIES,
    acks_late=True,
)
def match_chunk(self, chunk_id: int) -> dict[str, Any]:
    """Score one chunk of a matching job (``matching.match_chunk_run``).

    Transient errors (database, lost connection, broker) retry with exponential
    backoff on a fresh database connection. The attempt budget is counted in the
    database, so a chunk that keeps failing stops after
    ``settings.MATCH_MAX_ATTEMPTS`` claims whatever Celery believes; a lost connection
    does not use up an attempt.
    """
    try:
        return matching.match_chunk_run(chunk_id=chunk_id).as_dict()
    except matching.TRANSIENT_ERRORS as exc:
        matching.db_connection_reset()
        attempts = matching.chunk_attempts(chunk_id)
        if attempts is not None and attempts >= settings.MATCH_MAX_ATTEMPTS:
            return {"status": "failed", "detail": str(exc)}
        countdown = min(2 ** min(self.request.retries, 6), 60)
        raise self.retry(exc=exc, countdown=countdown) from exc


@shared_task(name=queue.MATCH_SUPERVISE, ignore_result=True)
def match_supervise() -> dict[str, Any]:
    """Re-queue stale chunks of every active job (schedule it every few minutes)."""
    requeued = matching.match_supervise()
    return {"jobs": len(requeued), "chunks": sum(len(v) for v in requeued.values())}


@worker_ready.connect
def _supervise_after_start(**_: Any) -> None:
    """A worker that starts may be replacing one that was killed: look for its
    orphaned chunks once their heartbeat has aged, even where beat is not running."""
    match_supervise.apply_async(countdown=settings.MATCH_ORPHAN_SECONDS + 1)


@shared_task(name=queue.MATCH_JOB_FIT, ignore_result=True)
def match_job_fit(job_id: int) -> dict[str, Any]:
    """Fit the relevance model of a finished job (``job_model.job_model_fit``); a job
    whose judgments cannot support a fit keeps the reason on its model row."""
    from nuggets_app.models import MatchJob

    job = MatchJob.objects.filter(pk=job_id).first()
    if job is None:
        return {"status": "skipped", "detail": "no such job"}
    try:
        summary = job_model.job_model_fit(job=job)
    except relevance_features.RelevanceModelError as exc:
        return {"status": "failed", "detail": str(exc)}
    return {"status": "done", "documents": summary.documents}


@shared_task(name=queue.UNPOOLED_SCORE, ignore_result=True, acks_late=True)
def unpooled_score(
    job_id: int, topic_id: int, document_ids: list[int]
) -> dict[str, Any]:
    """Score a batch of one topic's unpooled documents for a finished job
    (``unpooled.unpooled_score``; an upsert, safe to run twice)."""
    from nuggets_app.models import MatchJob

    job = MatchJob.objects.filter(pk=job_id).first()
    if job is None:
        return {"status": "skipped", "detail": "no such job"}
    try:
        written = unpooled.unpooled_score(
            job=job, topic_id=topic_id, document_ids=document_ids
        )
    except unpooled.UnpooledError as exc:
        return {"status": "failed", "detail": str(exc)}
    return {"status": "done", "documents": written}


@shared_task(name=queue.EMBED_CHUNK, ignore_result=True, acks_late=True)
def embed_chunk(job_id: int, document_ids: list[int]) -> dict[str, Any]:
    """Embed one chunk of an embedding job (``embeddings.embed_chunk_run``)."""
    return embeddings.embed_chunk_run(job_id=job_id, document_ids=document_ids)


@shared_task(name=queue.EMBED_NUGGETS, ignore_result=True, acks_late=True)
def embed_nuggets(nugget_ids: list[int]) -> dict[str, Any]:
    """Embed saved or edited nuggets (``embeddings.nuggets_embed``)."""
    return {"nuggets": embeddings.nuggets_embed(nugget_ids=nugget_ids)}


@shared_task(name=queue.EMBED_DOCUMENTS, ignore_result=True, acks_late=True)
def embed_documents(document_ids: list[int]) -> dict[str, Any]:
    """Embed documents a page asked for (``embeddings.documents_embed_missing``)."""
    return {"documents": embeddings.documents_embed_missing(document_ids=document_ids)}


@shared_task(name=queue.ROUNDS_ADVANCE, ignore_result=True)
def rounds_advance(sample_id: int, force: bool = False) -> dict[str, Any]:
    """Draw the next round of a sample in rounds once its latest round is judged
    (``rounds.rounds_advance``)."""
    drawn = rounds.rounds_advance(sample_id=sample_id, force=force)
    return {"status": "drawn" if drawn else "waiting"}
