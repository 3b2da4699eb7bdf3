"""Controlling jobs: cancel, resume, supervise, progress."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from nuggets_app.models import (
    MatchChunk,
    MatchJob,
)

from .base import ACTIVE, ChunkStatus, Status, logger
from .launch import enqueue_chunks


def match_job_cancel(*, job: MatchJob) -> MatchJob:
    """Stop dispatching the job's chunks: queued ones become no-ops, a running one
    stops at its next heartbeat without writing. Results already written are kept."""
    MatchJob.objects.filter(pk=job.pk, status__in=ACTIVE).update(
        status=Status.CANCELLED, finished_at=timezone.now()
    )
    job.refresh_from_db()
    return job


def match_job_resume(*, job: MatchJob) -> list[int]:
    """Re-run what is not done: failed chunks get a fresh attempt budget, stale
    running chunks (heartbeat older than ``MATCH_CHUNK_STALE_SECONDS``) and queued
    ones are enqueued again. Idempotent: done chunks are never touched, and a chunk
    that is still alive keeps its lock so the extra message is a no-op."""
    stale_before = timezone.now() - timedelta(
        seconds=settings.MATCH_CHUNK_STALE_SECONDS
    )
    with transaction.atomic():
        job = MatchJob.objects.select_for_update().get(pk=job.pk)
        if job.status == Status.DONE:
            return []
        MatchChunk.objects.filter(job=job, status=ChunkStatus.FAILED).update(
            status=ChunkStatus.QUEUED, attempts=0, error=""
        )
        restart = job.status not in ACTIVE
        pending = MatchChunk.objects.filter(job=job).exclude(status=ChunkStatus.DONE)
        if not restart:
            # A live job: only chunks that show no sign of life.
            pending = pending.filter(
                Q(status=ChunkStatus.QUEUED) | Q(heartbeat_at__lt=stale_before)
            )
        ids = list(pending.order_by("pk").values_list("pk", flat=True))
        MatchChunk.objects.filter(pk__in=ids).update(heartbeat_at=timezone.now())
        if restart:
            job.status = Status.RUNNING if job.chunks_done else Status.PENDING
            job.error = ""
            job.finished_at = None
            job.save(update_fields=["status", "error", "finished_at"])
        transaction.on_commit(lambda: enqueue_chunks(ids))
    return ids


def match_supervise() -> dict[int, list[int]]:
    """Re-queue, for every active job, the chunks whose heartbeat is older than
    ``settings.MATCH_CHUNK_STALE_SECONDS`` (their worker died, or the broker lost the
    message). Run it every few minutes; returns {job id: chunk ids re-queued}."""
    stale_before = timezone.now() - timedelta(
        seconds=settings.MATCH_CHUNK_STALE_SECONDS
    )
    stale = (
        MatchChunk.objects.filter(
            job__status__in=ACTIVE,
            status__in=[ChunkStatus.QUEUED, ChunkStatus.RUNNING],
            heartbeat_at__lt=stale_before,
        )
        .values_list("job_id", flat=True)
        .distinct()
    )
    requeued = {}
    for job in MatchJob.objects.filter(pk__in=list(stale)):
        ids = match_job_resume(job=job)
        if ids:
            logger.info("job %s: re-queued stale chunks %s", job.pk, ids)
            requeued[job.pk] = ids
    return requeued


# --- progress ------------------------------------------------------------------------
def match_job_progress(job: MatchJob) -> dict[str, Any]:
    """What the progress bar and the job page show, from the job's rows."""
    chunks = dict(
        MatchChunk.objects.filter(job=job)
        .values_list("status")
        .annotate(n=Count("pk"))
        .values_list("status", "n")
    )
    elapsed = None
    rate = None
    left = None
    if job.started_at:
        end = job.finished_at or timezone.now()
        elapsed = max((end - job.started_at).total_seconds(), 1e-6)
        rate = job.docs_done / elapsed
        if rate > 0 and job.status in ACTIVE:
            left = (job.docs_total - job.docs_done) / rate
    return {
        "id": job.pk,
        "status": job.status,
        "error": job.error,
        "chunks_total": job.chunks_total,
        "chunks_done": job.chunks_done,
        "chunks": {s: chunks.get(s, 0) for s in ChunkStatus.values},
        "docs_total": job.docs_total,
        "docs_done": job.docs_done,
        "elapsed_seconds": elapsed,
        "docs_per_second": rate,
        "seconds_left": left,
        "lam": job.lam,
        "k": job.k,
    }
