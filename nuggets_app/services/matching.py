"""Matching jobs: launch, run one chunk, cancel, resume, supervise, re-score.

The database is the source of truth: a job's chunks, their attempts, progress and
results are rows. Celery only carries chunk ids.

Which mechanism brings back a killed worker's chunk:

- a SIGKILLed pool *child*: the settings have ``acks_late`` and
  ``reject_on_worker_lost``, so the broker hands the message out again at once; the
  chunk is still ``running`` in the database, but nobody holds its advisory lock any
  more (PostgreSQL releases it with the dead connection), so the redelivered task
  claims it again;
- a SIGKILLed *main* worker process (or lost broker data): the message only comes back
  after the broker's visibility timeout, so :func:`match_supervise` (run it from cron
  or ``manage.py match --supervise``) re-queues chunks whose heartbeat is older than
  ``settings.MATCH_CHUNK_STALE_SECONDS``, and :func:`match_job_resume` does the same
  for one job on demand.

Every claim counts an attempt in the database; past ``settings.MATCH_MAX_ATTEMPTS``
the chunk fails the job instead of running again, so a chunk that kills its worker
every time cannot loop forever.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from matcher import MatchOptions, NuggetSpec, TopicMatcher
from nuggets_app.models import (
    Collection,
    Document,
    MatchChunk,
    MatchJob,
    MatchResult,
    Nugget,
    Pool,
    PoolDocument,
    Sample,
    SampleDocument,
    Topic,
)
from nuggets_app.services.inference import evidence_pack, evidence_rescore

logger = logging.getLogger(__name__)

Status = MatchJob.Status
ChunkStatus = MatchChunk.Status
ACTIVE = (Status.PENDING, Status.RUNNING)
RESULT_BATCH = 1000
HEARTBEAT_SECONDS = 1.0
# Namespace of the advisory locks (two-int form), so chunk ids never collide with
# locks other code takes on the same database.
LOCK_CLASS = 0x4E55


class MatchJobError(ValueError):
    """A job cannot be launched or changed as asked; the message says why."""


class TransientChunkError(Exception):
    """A chunk failed for a reason that may go away (database or broker hiccup)."""


class ChunkCancelled(Exception):
    """The job was cancelled while the chunk ran."""


TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    TransientChunkError,
    DatabaseError,
    ConnectionError,
    TimeoutError,
)


# --- launch -----------------------------------------------------------------------------
def match_job_launch(
    *,
    collection: Collection,
    topics: Sequence[Topic],
    source: str,
    pool: Pool | None = None,
    sample: Sample | None = None,
    nugget_filter: dict[str, list] | None = None,
    k: int = 3,
    lam: float = 0.5,
    stem: str = "porter",
    stopwords: str = "default",
    created_by: Any = None,
    name: str = "",
) -> MatchJob:
    """Create a job and its chunks (one topic and up to ``MATCH_CHUNK_SIZE`` documents
    each) and enqueue the chunks once the transaction commits."""
    topics = sorted(topics, key=lambda t: t.qid)
    _validate_launch(collection, topics, source, pool, sample, k, lam, stem, stopwords)
    size = max(1, settings.MATCH_CHUNK_SIZE)
    with transaction.atomic():
        job = MatchJob.objects.create(
            collection=collection,
            name=name,
            source=source,
            pool=pool,
            sample=sample,
            nugget_filter=_clean_filter(nugget_filter),
            k=k,
            lam=lam,
            stem=stem,
            stopwords=stopwords,
            created_by=created_by,
        )
        job.topics.set(topics)
        now = timezone.now()
        chunks: list[MatchChunk] = []
        for topic in topics:
            doc_ids = _source_document_ids(job, topic)
            for index, start in enumerate(range(0, len(doc_ids), size)):
                chunks.append(
                    MatchChunk(
                        job=job,
                        topic=topic,
                        index=index,
                        document_ids=doc_ids[start : start + size],
                        heartbeat_at=now,
                    )
                )
        MatchChunk.objects.bulk_create(chunks, batch_size=500)
        job.chunks_total = len(chunks)
        job.docs_total = sum(len(c.document_ids) for c in chunks)
        if not chunks:
            job.status = Status.DONE
            job.finished_at = now
        job.save(update_fields=["chunks_total", "docs_total", "status", "finished_at"])
        ids = [c.pk for c in chunks]
        transaction.on_commit(lambda: _enqueue(ids))
    return job


def _validate_launch(collection, topics, source, pool, sample, k, lam, stem, stopwords):
    if not topics:
        raise MatchJobError("choose at least one topic")
    stray = [t.qid for t in topics if t.collection_id != collection.pk]
    if stray:
        raise MatchJobError(f"topics {', '.join(stray)} are not in {collection.name}")
    if source == MatchJob.Source.POOL:
        if pool is None or pool.collection_id != collection.pk:
            raise MatchJobError(f"source 'pool' needs a pool of {collection.name}")
    elif source == MatchJob.Source.SAMPLE:
        if sample is None or sample.pool.collection_id != collection.pk:
            raise MatchJobError(f"source 'sample' needs a sample of {collection.name}")
    elif source != MatchJob.Source.COLLECTION:
        raise MatchJobError(f"unknown source {source!r} (pool, sample or collection)")
    if not isinstance(k, int) or k < 1:
        raise MatchJobError(f"k must be an integer >= 1, got {k!r}")
    if not 0 < lam <= 1:
        raise MatchJobError(f"lambda must be in (0, 1], got {lam!r}")
    if stem not in ("porter", "none"):
        raise MatchJobError(f"stem must be porter or none, got {stem!r}")
    if stopwords not in ("default", "none"):
        raise MatchJobError(f"stopwords must be default or none, got {stopwords!r}")


def _clean_filter(nugget_filter: dict[str, list] | None) -> dict[str, list]:
    allowed = {"assessors", "grades", "aspects"}
    out = {}
    for key, values in (nugget_filter or {}).items():
        if key not in allowed:
            raise MatchJobError(
                f"unknown nugget filter {key!r} (assessors, grades, aspects)"
            )
        if values:
            out[key] = sorted(values)
    return out


def _source_document_ids(job: MatchJob, topic: Topic) -> list[int]:
    if job.source == MatchJob.Source.POOL:
        qs = PoolDocument.objects.filter(pool=job.pool, topic=topic)
    elif job.source == MatchJob.Source.SAMPLE:
        qs = SampleDocument.objects.filter(sample=job.sample, topic=topic)
    else:
        qs = Document.objects.filter(collection=job.collection)
        return list(qs.order_by("pk").values_list("pk", flat=True))
    return sorted(set(qs.values_list("document_id", flat=True)))


def _enqueue(chunk_ids: Sequence[int]) -> None:
    from nuggets_app.tasks import match_chunk as match_chunk_task

    for chunk_id in chunk_ids:
        match_chunk_task.delay(chunk_id)


# --- one chunk ------------------------------------------------------------------------
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
    try:
        yield held
    finally:
        if held:
            with contextlib.suppress(DatabaseError), connection.cursor() as cursor:
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
    claimed = MatchChunk.objects.filter(
        pk=chunk.pk, status__in=[ChunkStatus.QUEUED, ChunkStatus.RUNNING]
    ).update(
        status=ChunkStatus.RUNNING,
        attempts=F("attempts") + 1,
        started_at=now,
        heartbeat_at=now,
    )
    if not claimed:
        return None, ChunkOutcome("skipped", detail="claimed elsewhere")
    MatchJob.objects.filter(pk=chunk.job_id, status=Status.PENDING).update(
        status=Status.RUNNING, started_at=now
    )
    chunk.refresh_from_db(fields=["attempts", "status"])
    return chunk, ChunkOutcome("running")


def chunk_attempts(chunk_id: int) -> int:
    """How many times the chunk has been claimed (0 for a vanished chunk)."""
    value = MatchChunk.objects.filter(pk=chunk_id).values_list("attempts", flat=True)
    return value.first() or 0


def _max_attempts() -> int:
    return max(1, settings.MATCH_MAX_ATTEMPTS)


def _chunk_work(chunk: MatchChunk) -> ChunkOutcome:
    job = chunk.job
    topic_matcher = _topic_matcher(job, chunk.topic_id)
    texts = dict(
        Document.objects.filter(pk__in=chunk.document_ids).values_list("pk", "text")
    )
    results: list[MatchResult] = []
    evidences: list[tuple[int, Any]] = []
    beat = time.monotonic()
    for doc_id in chunk.document_ids:
        text = texts.get(doc_id)
        if text is None:
            logger.warning("document %s of chunk %s vanished; skipped", doc_id, chunk)
            continue
        match = _score_document(topic_matcher, text)
        evidences.append((doc_id, match.evidence))
        results.append(_result_row(job, chunk.topic_id, doc_id, match))
        if time.monotonic() - beat >= HEARTBEAT_SECONDS:
            _chunk_heartbeat(chunk)
            beat = time.monotonic()
    packed = evidence_pack(evidences)
    _chunk_commit(chunk, results, packed)
    return ChunkOutcome("done", documents=len(results))


def _score_document(topic_matcher: TopicMatcher, text: str) -> Any:
    """One document against the topic's nuggets (a seam the fault tests wrap)."""
    return topic_matcher.score(text)


def _result_row(job: MatchJob, topic_id: int, doc_id: int, match: Any) -> MatchResult:
    return MatchResult(
        job=job,
        topic_id=topic_id,
        document_id=doc_id,
        score=float(match.score),
        nugget_id=int(match.nugget) if match.nugget is not None else None,
        spans=[list(span) for span in match.spans],
        shingle_spans=match.evidence.to_json() if match.score > 0 else {},
    )


def _chunk_heartbeat(chunk: MatchChunk) -> None:
    MatchChunk.objects.filter(pk=chunk.pk).update(heartbeat_at=timezone.now())
    status = MatchJob.objects.filter(pk=chunk.job_id).values_list("status", flat=True)
    if status.first() not in ACTIVE:
        raise ChunkCancelled


def _chunk_commit(chunk: MatchChunk, results: list[MatchResult], packed: bytes) -> None:
    """Results, the chunk's done state and the job's progress in one transaction."""
    now = timezone.now()
    with transaction.atomic():
        MatchResult.objects.bulk_create(
            results,
            batch_size=RESULT_BATCH,
            update_conflicts=True,
            unique_fields=["job", "topic", "document"],
            update_fields=["score", "nugget", "spans", "shingle_spans"],
        )
        finished = MatchChunk.objects.filter(
            pk=chunk.pk, status=ChunkStatus.RUNNING
        ).update(
            status=ChunkStatus.DONE,
            finished_at=now,
            heartbeat_at=now,
            error="",
            packed_evidence=packed,
        )
        if not finished:
            return
        MatchJob.objects.filter(pk=chunk.job_id).update(
            chunks_done=F("chunks_done") + 1,
            docs_done=F("docs_done") + len(chunk.document_ids),
        )
        MatchJob.objects.filter(
            pk=chunk.job_id, status__in=ACTIVE, chunks_done=F("chunks_total")
        ).update(status=Status.DONE, finished_at=now)


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


def job_nuggets(job: MatchJob, topic_id: int):
    """The nuggets of a topic that the job's nugget filter keeps, by primary key."""
    qs = Nugget.objects.filter(topic_id=topic_id)
    f = job.nugget_filter or {}
    if f.get("assessors"):
        qs = qs.filter(assessor_id__in=f["assessors"])
    if f.get("grades"):
        qs = qs.filter(grade__in=f["grades"])
    if f.get("aspects"):
        qs = qs.filter(aspect__in=f["aspects"])
    return qs.order_by("pk")


def job_nugget_specs(job: MatchJob, topic_id: int) -> list[NuggetSpec]:
    """The matcher's view of the job's nuggets for a topic (id = nugget primary key)."""
    return [
        NuggetSpec(
            id=str(n.pk), text=n.text, keywords=tuple(n.keywords or ()), grade=n.grade
        )
        for n in job_nuggets(job, topic_id)
    ]


# --- cancel, resume, supervise -------------------------------------------------------
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
        transaction.on_commit(lambda: _enqueue(ids))
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


# --- re-scoring ----------------------------------------------------------------------
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
    rescored = evidence_rescore([bytes(blob) for _, blob in blobs], lam)
    with transaction.atomic():
        changed = _scores_write(job, blobs, rescored)
        MatchJob.objects.filter(pk=job.pk).update(lam=lam)
    job.lam = lam
    _MATCHERS.clear()
    return RescoreSummary(
        results=sum(len(r[0]) for r in rescored),
        changed=changed,
        seconds=time.perf_counter() - started,
    )


def _scores_write(job: MatchJob, blobs, rescored) -> int:
    """Write new (score, nugget) pairs for the documents whose values changed."""
    import numpy as np

    changed = 0
    rows_doc, rows_topic, rows_score, rows_nugget = [], [], [], []
    for (topic_id, _), (doc_ids, scores, nuggets) in zip(blobs, rescored, strict=True):
        rows_doc.append(doc_ids)
        rows_topic.append(np.full(len(doc_ids), topic_id, dtype=np.int64))
        rows_score.append(scores)
        rows_nugget.append(nuggets)
    if not rows_doc:
        return 0
    docs = np.concatenate(rows_doc).tolist()
    topics = np.concatenate(rows_topic).tolist()
    scores = np.concatenate(rows_score).tolist()
    nuggets = [int(n) if n >= 0 else None for n in np.concatenate(rows_nugget).tolist()]
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
                  AND (r.score <> v.score OR r.nugget_id IS DISTINCT FROM v.nugget)
                """,
                [topics, docs, scores, nuggets, job.pk],
            )
            changed = cursor.rowcount
        return changed
    current = {
        (r.topic_id, r.document_id): r for r in MatchResult.objects.filter(job=job)
    }
    dirty = []
    for topic, doc, score, nugget in zip(topics, docs, scores, nuggets, strict=True):
        row = current.get((topic, doc))
        if row is not None and (row.score != score or row.nugget_id != nugget):
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
