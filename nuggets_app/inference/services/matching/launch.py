"""Launching a job: its chunks, enqueued after commit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from nuggets_app.collection.services.relevance import (
    RelevanceLevelError,
    relevance_level_check,
)
from nuggets_app.models import (
    Collection,
    Document,
    JobInference,
    MatchChunk,
    MatchJob,
    Nugget,
    Pool,
    PoolDocument,
    Sample,
    SampleDocument,
    Topic,
)
from nuggets_app.operations import queue
from nuggets_app.operations.services.health import BrokerUnavailable, broker_check

from .base import ChunkStatus, MatchJobError, Status, logger

# The heartbeat of a chunk whose message never reached the broker: older than any
# stale limit, so the supervisor's next round enqueues it.
NEVER_QUEUED = datetime(2000, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class MatchParams:
    """How a job matches, one value from the command, the launch form or a caller:
    the matcher's ``k`` best spans, ``lam`` (lambda), ``stem`` and ``stopwords``;
    ``nugget_filter``, which nuggets it matches ({"assessors", "banks", "grades",
    "aspects": [...]}); ``relevance_level``, relevant at grade >= it, for the job's
    model, rules and estimates (None: the collection's level, fixed on the job)."""

    k: int = 3
    lam: float = 0.5
    stem: str = "porter"
    stopwords: str = "default"
    nugget_filter: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    relevance_level: int | None = None


def match_job_launch(
    *,
    collection: Collection,
    topics: Sequence[Topic],
    source: str,
    pool: Pool | None = None,
    sample: Sample | None = None,
    params: MatchParams = MatchParams(),
    created_by: Any = None,
    name: str = "",
) -> MatchJob:
    """Create a job matching ``topics`` under ``params`` (:class:`MatchParams`) and its
    chunks (one topic and up to ``MATCH_CHUNK_SIZE`` documents each) and enqueue the
    chunks once the transaction commits.

    The broker is asked first: when it is unreachable nothing is saved and
    ``MatchJobError`` says so (a job committed with nothing queued would tempt the user
    to launch it twice)."""
    topics = sorted(topics, key=lambda t: t.qid)
    relevance_level = params.relevance_level
    if relevance_level is not None:
        try:
            relevance_level_check(collection=collection, level=relevance_level)
        except RelevanceLevelError as exc:
            raise MatchJobError(f"relevance level: {exc}") from None
    _validate_launch(collection, topics, source, pool, sample, params)
    if source != MatchJob.Source.SAMPLE:
        # A sample chosen beside another source (the launch form preselects the only
        # one) is not the job's: kept, it would make a pool job pass for a sample
        # job, with the sample's prels among its downloads.
        sample = None
    nugget_filter = _clean_filter(dict(params.nugget_filter))
    _check_aspects(topics, nugget_filter.get("aspects", []))
    try:
        broker_check()
    except BrokerUnavailable as exc:
        raise MatchJobError(
            f"{exc}. Nothing was launched: start the broker (REDIS_URL) and try again."
        ) from exc
    size = max(1, settings.MATCH_CHUNK_SIZE)
    with transaction.atomic():
        job = MatchJob.objects.create(
            collection=collection,
            name=name,
            source=source,
            pool=pool,
            sample=sample,
            nugget_filter=nugget_filter,
            k=params.k,
            lam=params.lam,
            stem=params.stem,
            stopwords=params.stopwords,
            created_by=created_by,
            relevance_level_setting=(
                collection.relevance_level
                if relevance_level is None
                else relevance_level
            ),
            documents_before=Document.objects.filter(collection=collection)
            .order_by("-pk")
            .values_list("pk", flat=True)
            .first(),
        )
        job.topics.set(topics)
        JobInference.objects.create(job=job)
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
        transaction.on_commit(lambda: enqueue_chunks(ids))
    return job


def _validate_launch(collection, topics, source, pool, sample, params: MatchParams):
    k, lam, stem, stopwords = params.k, params.lam, params.stem, params.stopwords
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
    allowed = {"assessors", "banks", "grades", "aspects"}
    out = {}
    for key, values in (nugget_filter or {}).items():
        if key not in allowed:
            raise MatchJobError(
                f"unknown nugget filter {key!r} (assessors, banks, grades, aspects)"
            )
        if values:
            out[key] = sorted(values)
    return out


def _check_aspects(topics: Sequence[Topic], aspects: list[str]) -> None:
    """Refuse aspect names that neither the topics declare nor any of their nuggets
    carries: such a filter keeps no nugget and the job would match nothing."""
    if not aspects:
        return
    known = {str(a.get("id", "")) for t in topics for a in (t.aspects or [])}
    known |= set(
        Nugget.objects.filter(topic__in=topics)
        .exclude(aspect="")
        .values_list("aspect", flat=True)
        .distinct()
    )
    unknown = [a for a in aspects if a not in known]
    if unknown:
        listed = ", ".join(sorted(known)) if known else "none"
        raise MatchJobError(
            f"unknown aspects: {', '.join(repr(a) for a in unknown)} "
            f"(the topics' aspects: {listed})"
        )


def _source_document_ids(job: MatchJob, topic: Topic) -> list[int]:
    if job.source == MatchJob.Source.POOL:
        qs = PoolDocument.objects.filter(pool=job.pool, topic=topic)
    elif job.source == MatchJob.Source.SAMPLE:
        qs = SampleDocument.objects.filter(sample=job.sample, topic=topic)
    else:
        qs = Document.objects.filter(collection=job.collection)
        return list(qs.order_by("pk").values_list("pk", flat=True))
    return sorted(set(qs.values_list("document_id", flat=True)))


def enqueue_chunks(chunk_ids: Sequence[int]) -> None:
    """Send one task per chunk (call it from ``transaction.on_commit``).

    If the broker fails part-way (it went down after the check), the chunks not sent
    are marked never queued, so the supervisor's next round enqueues them instead of
    leaving the committed job pending for good."""
    for n, chunk_id in enumerate(chunk_ids):
        try:
            queue.task_enqueue(queue.MATCH_CHUNK, chunk_id)
        except (BrokerError, OSError) as exc:
            rest = list(chunk_ids[n:])
            MatchChunk.objects.filter(pk__in=rest, status=ChunkStatus.QUEUED).update(
                heartbeat_at=NEVER_QUEUED
            )
            logger.error(
                "the broker is unreachable (%s): %d chunk(s) left for the supervisor",
                exc,
                len(rest),
            )
            return
