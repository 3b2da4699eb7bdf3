"""A small real world for job tests: Cranfield documents, topics, qrels and nuggets.

Nuggets are what an assessor would highlight: the first sentence of each of a
topic's first relevant documents (by the real Cranfield qrels), with exact offsets.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path

from nuggets_app.models import (
    Collection,
    Document,
    Judgment,
    MatchJob,
    Nugget,
    Pool,
    PoolDocument,
    Topic,
)
from tests.helpers import poll_until, read_qrels, status_until


@dataclass
class CranfieldPool:
    """Cranfield topics pooled from its runs: each topic's pooled documents and relevant docnos."""

    collection: Collection
    topics: list[Topic]
    pool: Pool
    pooled: dict[str, list[Document]] = field(default_factory=dict)
    relevant: dict[str, set[str]] = field(default_factory=dict)


def cranfield_world(
    shared_data: Path,
    assessor,
    *,
    qids: tuple[str, ...] = ("1", "2"),
    per_topic: int = 24,
    nuggets_per_topic: int = 3,
    judge: int = 12,
    markers: dict[str, str] | None = None,
) -> CranfieldPool:
    """Load a pool of ``per_topic`` documents per topic (its relevant ones first, then
    others by docno), nuggets from relevant documents, and ``judge`` judgments per
    topic by ``assessor`` (grades from the qrels, 0 for unlisted documents).

    ``markers`` maps docno -> a word appended to that document's text (fault tests).
    """
    base = shared_data / "cranfield"
    qrels = read_qrels(base / "qrels.txt", set(qids))
    wanted: dict[str, list[str]] = {}
    fillers = [str(n) for n in range(1, 400)]
    for qid in qids:
        rel = sorted(qrels[qid], key=int)
        others = [d for d in fillers if d not in qrels[qid]]
        wanted[qid] = (rel + others)[:per_topic]
    needed = {d for docs in wanted.values() for d in docs}
    collection = Collection.objects.create(name="cranfield-jobs")
    docs: dict[str, Document] = {}
    with gzip.open(base / "docs.jsonl.gz", "rt") as fh:
        for line in fh:
            row = json.loads(line)
            if row["docno"] in needed:
                text = row["text"]
                if markers and row["docno"] in markers:
                    text = f"{text} {markers[row['docno']]}"
                docs[row["docno"]] = Document(
                    collection=collection, docno=row["docno"], title=row["title"],
                    text=text, length_words=len(text.split()), length_chars=len(text),
                )  # fmt: skip
    Document.objects.bulk_create(docs.values())
    docs = {d.docno: d for d in Document.objects.filter(collection=collection)}
    topics_rows = {}
    for line in (base / "topics.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["qid"] in qids:
            topics_rows[row["qid"]] = row
    pool = Pool.objects.create(collection=collection, name="depth", depth=per_topic)
    world = CranfieldPool(collection=collection, topics=[], pool=pool)
    for qid in qids:
        topic = Topic.objects.create(
            collection=collection, qid=qid, title=topics_rows[qid]["title"]
        )
        world.topics.append(topic)
        world.pooled[qid] = [docs[d] for d in wanted[qid]]
        world.relevant[qid] = {d for d in wanted[qid] if qrels[qid].get(d, 0) >= 1}
        PoolDocument.objects.bulk_create(
            PoolDocument(
                pool=pool, topic=topic, document=docs[d], best_rank=i + 1, num_runs=1
            )
            for i, d in enumerate(wanted[qid])
        )
        for docno in sorted(qrels[qid], key=int)[:nuggets_per_topic]:
            doc = docs[docno]
            end = doc.text.find(" . ") + 1 or len(doc.text)
            Nugget.objects.create(
                topic=topic, assessor=assessor, document=doc, start=0, end=end,
                span_text=doc.text[:end], text=doc.text[:end], grade=1,
            )  # fmt: skip
        for docno in wanted[qid][:judge]:
            Judgment.objects.create(
                topic=topic, document=docs[docno], assessor=assessor,
                relevance=1 if qrels[qid].get(docno, 0) >= 1 else 0,
            )  # fmt: skip
    return world


def wait_for(job: MatchJob, statuses: set[str], timeout: float = 60) -> MatchJob:
    """Poll the job row until its status is one of ``statuses``."""
    return status_until(job, statuses, timeout)


def wait_until(predicate, timeout: float = 60, what: str = "condition") -> None:
    poll_until(predicate, what, timeout)


def run_inline(job: MatchJob) -> MatchJob:
    """Run every chunk of the job in this process (no worker), in chunk order."""
    from nuggets_app.inference.services.matching import match_chunk_run

    for chunk_id in job.chunks.order_by("pk").values_list("pk", flat=True):
        outcome = match_chunk_run(chunk_id=chunk_id)
        assert outcome.status == "done", outcome
    job.refresh_from_db()
    return job


def pool_job(world: CranfieldPool, settings, chunk_size: int) -> MatchJob:
    """A matching job over the world's whole pool in chunks of ``chunk_size``
    documents, run in this process; the relevance model's feature cache is cleared
    first (it outlives a test's database rows)."""
    from nuggets_app.inference.services import job_model
    from nuggets_app.inference.services.matching import match_job_launch

    settings.MATCH_CHUNK_SIZE = chunk_size
    job_model.features_cache_clear()
    job = match_job_launch(
        collection=world.collection, topics=world.topics, source="pool", pool=world.pool
    )
    return run_inline(job)
