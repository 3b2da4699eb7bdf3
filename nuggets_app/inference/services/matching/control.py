"""Controlling jobs: cancel, resume, supervise, progress."""

from __future__ import annotations

import base64
import json
import time
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from nuggets_app.models import (
    MatchChunk,
    MatchJob,
)
from nuggets_app.operations import queue

from .base import ACTIVE, LOCK_CLASS, ChunkStatus, Status, logger
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
    """Re-queue, for every active job, the chunks that no live worker runs: orphans
    (see :func:`match_orphans_requeue`), then chunks whose heartbeat is older than
    ``settings.MATCH_CHUNK_STALE_SECONDS`` (a hung worker, or a message the broker
    lost). Celery beat runs it every ``MATCH_SUPERVISE_SECONDS``; returns
    {job id: chunk ids re-queued}."""
    requeued = match_orphans_requeue()
    for job_id, ids in _lost_deliveries_restore().items():
        requeued[job_id] = sorted(set(requeued.get(job_id, [])) | set(ids))
    for job_id, ids in _stale_requeue().items():
        requeued[job_id] = sorted(set(requeued.get(job_id, [])) | set(ids))
    return requeued


def match_orphans_requeue() -> dict[int, list[int]]:
    """Re-queue the running chunks whose worker is dead, within seconds.

    A worker holds its chunk's advisory lock for as long as it works on it, and
    PostgreSQL drops the lock the moment the worker's connection dies (a SIGKILLed
    worker, a lost machine once TCP notices). So a chunk that is ``running``, has not
    beaten for ``MATCH_ORPHAN_SECONDS`` (which also skips a chunk being claimed right
    now) and whose lock nobody holds is an orphan: it goes back to ``queued`` and is
    enqueued again. A chunk that only waits for a retry after a transient error looks
    the same; the extra message is then a no-op. PostgreSQL only (elsewhere tasks run
    in-process and nothing can be orphaned)."""
    if connection.vendor != "postgresql":
        return {}
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.MATCH_ORPHAN_SECONDS)
    candidates = dict(
        MatchChunk.objects.filter(
            job__status__in=ACTIVE,
            status=ChunkStatus.RUNNING,
            heartbeat_at__lt=cutoff,
        ).values_list("pk", "job_id")
    )
    if not candidates:
        return {}
    held = _held_chunk_locks()
    orphans = [pk for pk in candidates if pk % 2**31 not in held]
    requeued: dict[int, list[int]] = {}
    with transaction.atomic():
        # The heartbeat condition again: a chunk claimed since the lock list was read
        # has a fresh heartbeat and is left alone.
        ids = list(
            MatchChunk.objects.select_for_update()
            .filter(pk__in=orphans, status=ChunkStatus.RUNNING, heartbeat_at__lt=cutoff)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        MatchChunk.objects.filter(pk__in=ids).update(
            status=ChunkStatus.QUEUED, heartbeat_at=now
        )
        transaction.on_commit(lambda: enqueue_chunks(sorted(ids)))
    for pk in sorted(ids):
        requeued.setdefault(candidates[pk], []).append(pk)
    for job_id, chunk_ids in requeued.items():
        logger.warning("job %s: re-queued orphaned chunks %s", job_id, chunk_ids)
    return requeued


CHUNK_TASK = queue.MATCH_CHUNK


def _lost_deliveries_restore() -> dict[int, list[int]]:
    """Put back at the head of the queue the chunk messages a dead worker took but
    never started.

    A worker killed between taking a message and claiming its chunk leaves the chunk
    ``queued`` and the message in Redis's unacknowledged set until the visibility
    timeout (hours). A live worker claims a chunk within milliseconds of taking its
    message (it only takes one when a pool process is free), so a message delivered
    more than ``MATCH_ORPHAN_SECONDS`` ago whose chunk is still queued and unlocked was
    lost with its worker. Redis broker only."""
    if settings.CELERY_TASK_ALWAYS_EAGER or connection.vendor != "postgresql":
        return {}
    from nuggets_app.celery import app

    with app.connection_for_write() as conn:
        channel = conn.default_channel
        qos = getattr(channel, "qos", None)
        client = getattr(channel, "client", None)
        if client is None or not hasattr(qos, "restore_by_tag"):
            return {}
        before = time.time() - settings.MATCH_ORPHAN_SECONDS
        tags = client.zrangebyscore(channel.unacked_index_key, 0, before)
        delivered: dict[int, list[Any]] = {}
        for tag in tags:
            chunk_id = _delivered_chunk(client.hget(channel.unacked_key, tag))
            if chunk_id is not None:
                delivered.setdefault(chunk_id, []).append(tag)
        if not delivered:
            return {}
        cutoff = timezone.now() - timedelta(seconds=settings.MATCH_ORPHAN_SECONDS)
        waiting = dict(
            MatchChunk.objects.filter(
                pk__in=list(delivered),
                job__status__in=ACTIVE,
                status=ChunkStatus.QUEUED,
                heartbeat_at__lt=cutoff,
            ).values_list("pk", "job_id")
        )
        held = _held_chunk_locks()
        restored: dict[int, list[int]] = {}
        for chunk_id, job_id in sorted(waiting.items()):
            if chunk_id % 2**31 in held:
                continue
            for tag in delivered[chunk_id]:
                qos.restore_by_tag(tag, client, leftmost=False)
            restored.setdefault(job_id, []).append(chunk_id)
        MatchChunk.objects.filter(
            pk__in=[pk for ids in restored.values() for pk in ids]
        ).update(heartbeat_at=timezone.now())
    for job_id, chunk_ids in restored.items():
        logger.warning(
            "job %s: restored chunk messages a lost worker held %s", job_id, chunk_ids
        )
    return restored


def _delivered_chunk(raw: bytes | str | None) -> int | None:
    """The chunk id of an unacknowledged match_chunk message, else None."""
    if not raw:
        return None
    try:
        message = json.loads(raw)[0]
        if message.get("headers", {}).get("task") != CHUNK_TASK:
            return None
        body = message["body"]
        if message.get("properties", {}).get("body_encoding") == "base64":
            body = base64.b64decode(body)
        args = json.loads(body)[0]
        return int(args[0])
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def _held_chunk_locks() -> set[int]:
    """Keys of the chunk advisory locks held on this database right now."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT objid::bigint FROM pg_locks"
            " WHERE locktype = 'advisory' AND granted AND objsubid = 2"
            " AND classid = %s::oid"
            " AND database = (SELECT oid FROM pg_database"
            " WHERE datname = current_database())",
            [LOCK_CLASS],
        )
        return {row[0] for row in cursor.fetchall()}


def _stale_requeue() -> dict[int, list[int]]:
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
    stale_before = timezone.now() - timedelta(
        seconds=settings.MATCH_CHUNK_STALE_SECONDS
    )
    stale = (
        job.status in ACTIVE
        and MatchChunk.objects.filter(
            job=job,
            status__in=[ChunkStatus.QUEUED, ChunkStatus.RUNNING],
            heartbeat_at__lt=stale_before,
        ).exists()
    )
    elapsed = None
    rate = None
    left = None
    quiet = _quiet_seconds(job)
    stalled = quiet is not None and quiet > settings.MATCH_CHUNK_STALE_SECONDS
    if job.started_at:
        end = job.finished_at or timezone.now()
        elapsed = max((end - job.started_at).total_seconds(), 1e-6)
        rate = job.docs_done / elapsed
        if rate > 0 and job.status in ACTIVE:
            left = (job.docs_total - job.docs_done) / rate
    return {
        "id": job.pk,
        "status": job.status,
        # What the page shows: "stalled" for an active job none of whose chunks has
        # moved for longer than MATCH_CHUNK_STALE_SECONDS (no worker, lost messages).
        "state": "stalled" if stalled else job.status,
        "stalled": stalled,
        "quiet_seconds": quiet,
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
        # Which controls apply now: cancel a live job; re-run a stopped one, or a
        # live one whose chunks show no sign of life (a dead worker).
        "can_cancel": job.status in ACTIVE,
        "can_resume": job.status in (Status.FAILED, Status.CANCELLED) or stale,
        "can_rescore": job.status == Status.DONE,
    }


def _quiet_seconds(job: MatchJob) -> float | None:
    """Seconds since any chunk of an active job last moved (claimed, beat, finished),
    or None for a finished job."""
    if job.status not in ACTIVE:
        return None
    last = MatchChunk.objects.filter(job=job).aggregate(last=Max("heartbeat_at"))
    if last["last"] is None:
        return None
    return max(0.0, (timezone.now() - last["last"]).total_seconds())
