"""Celery entry points only: each task takes ids and plain values, calls one service
and returns a small summary. Callers import them with a ``_task`` suffix."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings

from nuggets_app.services import matching


@shared_task(bind=True, ignore_result=True, max_retries=None, acks_late=True)
def match_chunk(self, chunk_id: int) -> dict[str, Any]:
    """Score one chunk of a matching job (``matching.match_chunk_run``).

    Transient errors (database, connection) retry with exponential backoff; the
    attempt budget is counted in the database, so retries stop after
    ``settings.MATCH_MAX_ATTEMPTS`` claims whatever Celery believes.
    """
    try:
        return matching.match_chunk_run(chunk_id=chunk_id).as_dict()
    except matching.TRANSIENT_ERRORS as exc:
        attempts = matching.chunk_attempts(chunk_id)
        if attempts >= settings.MATCH_MAX_ATTEMPTS:
            return {"status": "failed", "detail": str(exc)}
        raise self.retry(exc=exc, countdown=min(2**attempts, 60)) from exc


@shared_task(ignore_result=True)
def match_supervise() -> dict[str, Any]:
    """Re-queue stale chunks of every active job (schedule it every few minutes)."""
    requeued = matching.match_supervise()
    return {"jobs": len(requeued), "chunks": sum(len(v) for v in requeued.values())}
