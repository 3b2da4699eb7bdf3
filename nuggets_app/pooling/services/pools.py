"""Depth-k pools: build them from imported runs, and summarise them.

A pool holds, per topic, the union of the top ``depth`` documents of the chosen runs,
with each document's best rank, the number of runs that retrieved it and its statAP
sampling probability ``p(d)`` (``nuggets_app.ir.sampling.pool_distribution``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from collections.abc import Collection as Collection_
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Q

from nuggets_app.errors import DomainError
from nuggets_app.ir.sampling import SamplingError, pool_distribution
from nuggets_app.models import (
    Collection,
    Document,
    Pool,
    PoolDocument,
    Run,
    RunEntry,
    Topic,
)
from nuggets_app.operations.bulk import insert_rows

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each topic."""

_BATCH = 20000


class PoolError(DomainError):
    """A pool cannot be built as asked; the message says why."""


@dataclass
class TopicRankings:
    """One topic's run lists inside a pool: run name -> docnos best first."""

    qid: str
    rankings: dict[str, list[str]]
    document_ids: dict[str, int]


@dataclass(frozen=True)
class TopicPoolSummary:
    qid: str
    size: int
    single_run: int


@dataclass(frozen=True)
class PoolSummary:
    """Pool size per topic and documents contributed by only one run."""

    name: str
    depth: int
    runs: int
    topics: list[TopicPoolSummary]

    @property
    def documents(self) -> int:
        return sum(topic.size for topic in self.topics)

    @property
    def single_run(self) -> int:
        return sum(topic.single_run for topic in self.topics)


def qid_sort_key(qid: str) -> tuple[int, int, str]:
    """Numeric qids in numeric order, then the others alphabetically."""
    return (0, int(qid), "") if qid.isdigit() else (1, 0, qid)


def _entries(runs: Sequence[Run], depth: int, topics: Collection_[str] | None):
    """The run entries a pool of ``runs`` at ``depth`` takes (of ``topics``, if given)."""
    entries = RunEntry.objects.filter(run__in=runs, rank__lte=depth)
    if topics is not None:
        entries = entries.filter(topic__qid__in=list(topics))
    return entries


def pool_rankings(
    *, runs: Iterable[Run], depth: int, topics: Collection_[str] | None = None
) -> dict[int, TopicRankings]:
    """Per topic id, the top ``depth`` docnos of every run, in rank order (only the
    topics whose qid is in ``topics``, when given).

    Ranks come from ``RunEntry.rank`` (already in trec_eval order). Entries stream as
    integer ids; docnos, qids and run names are looked up once each, which is several
    times faster than joining them onto every entry.
    """
    runs = list(runs)
    names = {run.pk: run.name for run in runs}
    entries = _entries(runs, depth, topics)
    docnos = dict(
        Document.objects.filter(pk__in=entries.values("document_id")).values_list(
            "pk", "docno"
        )
    )
    qids = dict(
        Topic.objects.filter(pk__in=entries.values("topic_id")).values_list("pk", "qid")
    )
    rows = (
        entries.order_by("topic_id", "run_id", "rank")
        .values_list("topic_id", "run_id", "document_id")
        .iterator(chunk_size=20000)
    )
    found: dict[int, TopicRankings] = {}
    for topic_id, run_id, document_id in rows:
        topic = found.get(topic_id)
        if topic is None:
            topic = found[topic_id] = TopicRankings(qids[topic_id], {}, {})
        docno = docnos[document_id]
        topic.rankings.setdefault(names[run_id], []).append(docno)
        topic.document_ids[docno] = document_id
    return found


POOL_FIELDS = ["pool", "topic", "document", "best_rank", "num_runs", "prior"]


def _pool_rows(pool: Pool, topic_id: int, topic: TopicRankings) -> list[tuple]:
    """``POOL_FIELDS`` tuples of one topic (tuples: model instances cost more than SQL)."""
    try:
        prior = pool_distribution(topic.rankings)
    except SamplingError as error:
        raise PoolError(f"topic {topic.qid}: {error}") from error
    best: dict[str, int] = {}
    num_runs: dict[str, int] = {}
    for ranking in topic.rankings.values():
        for rank, docno in enumerate(ranking, start=1):
            best[docno] = min(rank, best.get(docno, rank))
            num_runs[docno] = num_runs.get(docno, 0) + 1
    return [
        (pool.pk, topic_id, topic.document_ids[d], best[d], num_runs[d], prob)
        for d, prob in sorted(prior.items())
    ]


def unknown_topics(collection: Collection, qids: Iterable[str]) -> list[str]:
    """The qids of ``qids`` that are not topics of ``collection``, in the order given."""
    qids = list(dict.fromkeys(qids))
    known = set(collection.topics.filter(qid__in=qids).values_list("qid", flat=True))
    return [qid for qid in qids if qid not in known]


def _check_request(
    collection: Collection,
    runs: Sequence[Run],
    depth: int,
    topics: Collection_[str] | None,
) -> None:
    if depth < 1:
        raise PoolError(f"depth must be at least 1, got {depth}")
    if not runs:
        raise PoolError("no runs chosen for the pool")
    foreign = sorted(run.name for run in runs if run.collection_id != collection.pk)
    if foreign:
        raise PoolError(
            f"runs not in collection {collection.name}: {', '.join(foreign)}"
        )
    unknown = unknown_topics(collection, topics or ())
    if unknown:
        raise PoolError(
            f"unknown topics in collection {collection.name}: {', '.join(unknown)}"
        )


def _same_definition(
    pool: Pool, runs: Sequence[Run], depth: int, topic_ids: Iterable[int]
) -> bool:
    """Same depth, runs and topics."""
    current = sorted(pool.runs.values_list("pk", flat=True))
    if pool.depth != depth or current != sorted(run.pk for run in runs):
        return False
    pooled = set(pool.documents.values_list("topic_id", flat=True).distinct())
    return pooled == set(topic_ids)


def pool_build(
    *,
    collection: Collection,
    runs: Iterable[Run],
    depth: int,
    name: str,
    progress: Progress | None = None,
    topics: Collection_[str] | None = None,
) -> Pool:
    """Build (or rebuild) the depth-``depth`` pool ``name`` of ``runs``, over every
    topic the runs answer or only those whose qid is in ``topics``.

    Rebuilding a pool with the same runs, depth and topics changes nothing and returns
    it. A pool of that name with another definition is rebuilt, unless samples were
    drawn from it (they would no longer match their pool). All writes happen in one
    transaction.
    """
    runs = list(runs)
    _check_request(collection, runs, depth, topics)
    topic_ids = set(
        _entries(runs, depth, topics).values_list("topic_id", flat=True).distinct()
    )
    if not topic_ids:
        raise PoolError(
            f"the runs have no entries in collection {collection.name}"
            + (" for the topics asked" if topics is not None else "; import them first")
        )
    with transaction.atomic():
        existing = (
            Pool.objects.select_for_update()
            .filter(collection=collection, name=name)
            .first()
        )
        if existing is not None:
            if _same_definition(existing, runs, depth, topic_ids):
                return existing
            if existing.samples.exists():
                raise PoolError(
                    f"pool {name} has samples and another definition "
                    f"(depth {existing.depth}, its runs or topics); choose a new name"
                )
            existing.documents.all().delete()
            existing.depth = depth
            existing.save(update_fields=["depth"])
        pool = existing or Pool.objects.create(
            collection=collection, name=name, depth=depth
        )
        pool.runs.set(runs)
        rankings = pool_rankings(runs=runs, depth=depth, topics=topics)
        rows: list[tuple] = []
        for done, (topic_id, topic) in enumerate(sorted(rankings.items()), start=1):
            rows.extend(_pool_rows(pool, topic_id, topic))
            if len(rows) >= _BATCH:
                insert_rows(PoolDocument, POOL_FIELDS, rows)
                rows = []
            if progress is not None:
                progress(done, len(rankings))
        insert_rows(PoolDocument, POOL_FIELDS, rows)
    return pool


def pool_summary(pool: Pool) -> PoolSummary:
    """Pool size per topic and the documents that only one run contributed."""
    counts = (
        PoolDocument.objects.filter(pool=pool)
        .values("topic__qid")
        .annotate(size=Count("id"), single=Count("id", filter=Q(num_runs=1)))
    )
    topics = [
        TopicPoolSummary(row["topic__qid"], row["size"], row["single"])
        for row in counts
    ]
    topics.sort(key=lambda topic: qid_sort_key(topic.qid))
    return PoolSummary(pool.name, pool.depth, pool.runs.count(), topics)
