"""Running one chunk: lock, claim, score, upsert, progress; errors and retries."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DatabaseError, InterfaceError, connection, transaction
from django.db.models import F
from django.utils import timezone

from matcher import MatchOptions, TopicMatcher
from matcher.tokens import stems_save
from nuggets_app.inference.selectors import job_nugget_specs
from nuggets_app.inference.services.corpus_stats import job_stats_ensure, title_terms
from nuggets_app.inference.services.evidence import evidence_pack
from nuggets_app.inference.services.job_model import chunk_features_pack
from nuggets_app.models import (
    Document,
    MatchChunk,
    MatchJob,
    MatchResult,
)
from nuggets_app.operations import queue

from .base import (
    ACTIVE,
    HEARTBEAT_SECONDS,
    LOCK_CLASS,
    RESULT_BATCH,
    TRANSIENT_ERRORS,
    ChunkCancelled,
    ChunkStatus,
    Status,
    db_connection_lost,
    db_connection_reset,
    logger,
)


@dataclass
class ChunkOutcome:
    """What one delivery of a chunk task did."""

    status: str  # done, skipped, busy, cancelled, failed
    documents: int = 0
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "documents": self.documents,
            "detail": self.detail,
        }


def match_job_finish_here(job: MatchJob) -> MatchJob:
    """Run in this process every chunk of ``job`` not done yet (one an in-process
    launch left behind, e.g. after a transient error) and return the job as it ended:
    for commands and experiments that run a whole job without a worker."""
    for chunk_id in job.chunks.exclude(status="done").values_list("pk", flat=True):
        match_chunk_run(chunk_id=chunk_id)
    job.refresh_from_db()
    return job


def match_chunk_run(*, chunk_id: int) -> ChunkOutcome:
    """Score one chunk's documents and upsert its results.

    Safe to run twice or concurrently: only the holder of the chunk's lock works on it,
    a finished chunk is skipped, and results are upserts on (job, topic, document).
    Raises one of ``TRANSIENT_ERRORS`` when a retry may help (the caller retries with
    backoff); any other error fails the chunk and its job at once.
    """
    with _chunk_lock(chunk_id) as held:
        if not held:
            return ChunkOutcome("busy", detail="another worker holds this chunk")
        chunk, refusal = _chunk_claim(chunk_id)
        if chunk is None:
            return refusal
        try:
            return _chunk_work(chunk)
        except ChunkCancelled:
            MatchChunk.objects.filter(pk=chunk.pk).update(
                status=ChunkStatus.QUEUED, attempts=F("attempts") - 1
            )
            return ChunkOutcome("cancelled")
        except TRANSIENT_ERRORS as exc:
            if db_connection_lost(exc):
                db_connection_reset()
                # The connection died under the chunk (database restart, failover,
                # network): not the chunk's fault, so the attempt is given back and
                # the caller retries on a new connection.
                _chunk_refund(chunk, exc)
                raise
            _chunk_note_error(chunk, exc, final=chunk.attempts >= _max_attempts())
            raise
        except Exception as exc:
            _chunk_note_error(chunk, exc, final=True)
            return ChunkOutcome("failed", detail=_describe(exc))


@contextlib.contextmanager
def _chunk_lock(chunk_id: int) -> Iterator[bool]:
    """A session advisory lock on PostgreSQL: held while this worker lives, released
    by the server when its connection dies. Elsewhere (SQLite, eager tasks) one
    process runs everything, so the lock is always granted."""
    if connection.vendor != "postgresql":
        yield True
        return
    key = (LOCK_CLASS, chunk_id % 2**31)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", key)
        held = cursor.fetchone()[0]
    owner = connection.connection
    try:
        yield held
    finally:
        # A lock dies with its connection: nothing to release on a new one.
        if held and connection.connection is owner:
            with (
                contextlib.suppress(DatabaseError, InterfaceError),
                connection.cursor() as cursor,
            ):
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", key)


def _chunk_claim(chunk_id: int) -> tuple[MatchChunk | None, ChunkOutcome]:
    """Mark the chunk running and count the attempt, or say why not."""
    chunk = (
        MatchChunk.objects.select_related("job", "topic").filter(pk=chunk_id).first()
    )
    if chunk is None:
        logger.warning("chunk %s vanished; skipped", chunk_id)
        return None, ChunkOutcome("skipped", detail="no such chunk")
    if chunk.job.status not in ACTIVE:
        return None, ChunkOutcome("skipped", detail=f"job is {chunk.job.status}")
    if chunk.status not in (ChunkStatus.QUEUED, ChunkStatus.RUNNING):
        return None, ChunkOutcome("skipped", detail=f"chunk is {chunk.status}")
    if chunk.attempts >= _max_attempts():
        # The previous attempt died without a word (worker killed): give up here.
        reason = chunk.error or "the worker was lost while running it"
        chunk.error = f"gave up after {chunk.attempts} attempts: {reason}"
        _chunk_fail(chunk)
        return None, ChunkOutcome("failed", detail=chunk.error)
    now = timezone.now()
    # The job's status is checked again in the claim itself: a cancel that lands
    # between the read above and this update must not let the chunk start after it.
    claimed = MatchChunk.objects.filter(
        pk=chunk.pk,
        status__in=[ChunkStatus.QUEUED, ChunkStatus.RUNNING],
        job__status__in=ACTIVE,
    ).update(
        status=ChunkStatus.RUNNING,
        attempts=F("attempts") + 1,
        started_at=now,
        heartbeat_at=now,
    )
    if not claimed:
        return None, ChunkOutcome("skipped", detail="claimed elsewhere or job stopped")
    MatchJob.objects.filter(pk=chunk.job_id, status=Status.PENDING).update(
        status=Status.RUNNING, started_at=now
    )
    chunk.refresh_from_db(fields=["attempts", "status"])
    return chunk, ChunkOutcome("running")


def chunk_attempts(chunk_id: int) -> int | None:
    """How many times the chunk has been claimed (0 for a vanished chunk), or None
    when the database cannot be reached (the connection is then reset)."""
    try:
        value = MatchChunk.objects.filter(pk=chunk_id).values_list(
            "attempts", flat=True
        )
        return value.first() or 0
    except (DatabaseError, InterfaceError):
        db_connection_reset()
        return None


def _chunk_refund(chunk: MatchChunk, exc: BaseException) -> None:
    """Give back the attempt a lost connection cost, if the database answers again."""
    try:
        MatchChunk.objects.filter(pk=chunk.pk, status=ChunkStatus.RUNNING).update(
            attempts=F("attempts") - 1, error=_describe(exc)
        )
    except (DatabaseError, InterfaceError):
        db_connection_reset()


def _max_attempts() -> int:
    return max(1, settings.MATCH_MAX_ATTEMPTS)


def _chunk_work(chunk: MatchChunk) -> ChunkOutcome:
    job = chunk.job
    topic_matcher = _topic_matcher(job, chunk.topic_id)
    job_stats_ensure(job=job)
    rows = {
        pk: (docno, title, text)
        for pk, docno, title, text in Document.objects.filter(
            pk__in=chunk.document_ids
        ).values_list("pk", "docno", "title", "text")
    }
    options = topic_matcher.options
    results: list[MatchResult] = []
    evidences: list[tuple[int, Any]] = []
    described: list[tuple[int, str, Any, dict[str, float]]] = []
    beat = time.monotonic()
    for doc_id in chunk.document_ids:
        row = rows.get(doc_id)
        if row is None:
            logger.warning("document %s of chunk %s vanished; skipped", doc_id, chunk)
            continue
        match, terms = _score_document(topic_matcher, row[2])
        terms = title_terms(row[1], row[2], options) + terms
        evidences.append((doc_id, match.evidence))
        results.append(_result_row(job, chunk.topic_id, doc_id, match))
        minspan = {item.nugget: item.score(job.lam) for item in match.evidence.nuggets}
        described.append((doc_id, row[0], terms, minspan))
        if time.monotonic() - beat >= HEARTBEAT_SECONDS:
            _chunk_heartbeat(chunk)
            beat = time.monotonic()
    packed = evidence_pack(evidences)
    features = chunk_features_pack(
        job=job, topic_id=chunk.topic_id, documents=described
    )
    _chunk_commit(chunk, results, packed, features)
    stems_save()  # the chunk's new stems, for every later worker process
    return ChunkOutcome("done", documents=len(results))


def _score_document(topic_matcher: TopicMatcher, text: str) -> tuple[Any, list[str]]:
    """One document against the topic's nuggets, and its terms (the relevance
    model's too); a seam the fault tests wrap."""
    prepared = topic_matcher.prepare(text)
    return topic_matcher.score_prepared(prepared), prepared.terms


def _result_row(job: MatchJob, topic_id: int, doc_id: int, match: Any) -> MatchResult:
    return MatchResult(
        job=job,
        topic_id=topic_id,
        document_id=doc_id,
        score=float(match.score),
        nugget_id=int(match.nugget) if match.nugget is not None else None,
        spans=[list(span) for span in match.spans],
    )


def _chunk_heartbeat(chunk: MatchChunk) -> None:
    MatchChunk.objects.filter(pk=chunk.pk).update(heartbeat_at=timezone.now())
    status = MatchJob.objects.filter(pk=chunk.job_id).values_list("status", flat=True)
    if status.first() not in ACTIVE:
        raise ChunkCancelled


def _chunk_commit(
    chunk: MatchChunk, results: list[MatchResult], packed: bytes, features: bytes
) -> None:
    """Results, the chunk's done state and the job's progress in one transaction; the
    last chunk enqueues the fit of the job's relevance model."""
    now = timezone.now()
    with transaction.atomic():
        MatchResult.objects.bulk_create(
            results,
            batch_size=RESULT_BATCH,
            update_conflicts=True,
            unique_fields=["job", "topic", "document"],
            update_fields=["score", "nugget", "spans"],
        )
        finished = MatchChunk.objects.filter(
            pk=chunk.pk, status=ChunkStatus.RUNNING
        ).update(
            status=ChunkStatus.DONE,
            finished_at=now,
            heartbeat_at=now,
            error="",
            packed_evidence=packed,
            packed_features=features,
        )
        if not finished:
            return
        MatchJob.objects.filter(pk=chunk.job_id).update(
            chunks_done=F("chunks_done") + 1,
            docs_done=F("docs_done") + len(chunk.document_ids),
        )
        done = MatchJob.objects.filter(
            pk=chunk.job_id, status__in=ACTIVE, chunks_done=F("chunks_total")
        ).update(status=Status.DONE, finished_at=now)
        if done:
            transaction.on_commit(lambda: enqueue_fit(chunk.job_id))


def _chunk_note_error(chunk: MatchChunk, exc: BaseException, *, final: bool) -> None:
    chunk.error = _describe(exc)
    if final:
        _chunk_fail(chunk)
    else:
        MatchChunk.objects.filter(pk=chunk.pk).update(error=chunk.error)


def _chunk_fail(chunk: MatchChunk) -> None:
    now = timezone.now()
    with transaction.atomic():
        MatchChunk.objects.filter(pk=chunk.pk).update(
            status=ChunkStatus.FAILED, error=chunk.error, finished_at=now
        )
        label = f"topic {chunk.topic.qid} chunk {chunk.index}"
        MatchJob.objects.filter(pk=chunk.job_id, status__in=ACTIVE).update(
            status=Status.FAILED, error=f"{label}: {chunk.error}", finished_at=now
        )


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:2000]


_MATCHERS: dict[tuple[int, int], TopicMatcher] = {}


def matcher_cache_clear() -> None:
    """Forget the cached topic matchers (their lambda is stale after a re-score)."""
    _MATCHERS.clear()


def _topic_matcher(job: MatchJob, topic_id: int) -> TopicMatcher:
    """The topic's matcher, built once per worker process and job."""
    key = (job.pk, topic_id)
    if key not in _MATCHERS:
        if len(_MATCHERS) > 64:
            _MATCHERS.clear()
        options = MatchOptions(
            k=job.k, lam=job.lam, stem=job.stem, stopwords=job.stopwords
        )
        _MATCHERS[key] = TopicMatcher(job_nugget_specs(job, topic_id), options)
    return _MATCHERS[key]


def enqueue_fit(job_id: int) -> None:
    """Send the task that fits the job's relevance model."""
    queue.task_enqueue(queue.MATCH_JOB_FIT, job_id)
