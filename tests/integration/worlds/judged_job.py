"""A small real world for the evaluation tests, read from the shared Cranfield files.

Six topics, four real runs cut at depth 20, the real qrels stored as imported qrels,
a depth-10 pool of the runs, a seeded statAP sample judged by the assessor with the
real qrels (grade 1 if relevant, else 0), nuggets on the first sentence of judged
relevant sampled documents, and a matching job over the pool run in-process.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

from nuggets_app.inference.services.matching import match_job_launch
from nuggets_app.models import (
    Collection,
    Document,
    Judgment,
    MatchJob,
    Nugget,
    Pool,
    Qrels,
    QrelsEntry,
    Run,
    RunEntry,
    Sample,
    SampleDocument,
    Topic,
)
from nuggets_app.pooling.services.pools import pool_build
from nuggets_app.pooling.services.samples import sample_draw
from tests import helpers
from tests.helpers import read_run
from tests.integration.worlds.cranfield_pool import run_inline

QIDS = ("1", "2", "3", "4", "5", "6")
RUNS = (
    "kidus-hw1-bm25",
    "kidus-hw1-tfidf",
    "kidus-hw1-okapitf",
    "kidus-hw1-laplace",
)
DEPTH = 20


@dataclass
class JudgedJob:
    """A collection's topics, qrels, judged sample and matching job, and the files they came from."""

    collection: Collection
    topics: dict[str, Topic]
    qrels: Qrels
    pool: Pool
    sample: Sample
    job: MatchJob
    file_qrels: dict[str, dict[str, int]]
    file_runs: dict[str, dict[str, dict[str, float]]]


def read_runs(base: Path) -> dict[str, dict[str, dict[str, float]]]:
    """The chosen runs straight from the files: top ``DEPTH`` of each chosen topic."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name in RUNS:
        for qid, docno, rank, score, _ in read_run(base / "runs" / f"{name}.run.gz"):
            if qid in QIDS and rank <= DEPTH:
                out.setdefault(name, {}).setdefault(qid, {})[docno] = score
    return out


def read_qrels(base: Path) -> dict[str, dict[str, int]]:
    return helpers.read_qrels(base / "qrels.txt", QIDS)


def _documents(base: Path, collection: Collection, needed: set[str]) -> dict:
    rows = []
    with gzip.open(base / "docs.jsonl.gz", "rt") as fh:
        for line in fh:
            row = json.loads(line)
            if row["docno"] in needed:
                text = row["text"]
                rows.append(Document(
                    collection=collection, docno=row["docno"], title=row["title"],
                    text=text, length_words=len(text.split()), length_chars=len(text),
                ))  # fmt: skip
    Document.objects.bulk_create(rows)
    return {d.docno: d for d in Document.objects.filter(collection=collection)}


def evaluation_world(shared_data: Path, assessor, *, judge: bool = True) -> JudgedJob:
    """Build the world (see the module docstring)."""
    base = shared_data / "cranfield"
    runs = read_runs(base)
    qrels = read_qrels(base)
    needed = {d for run in runs.values() for docs in run.values() for d in docs}
    needed |= {d for docs in qrels.values() for d in docs}
    collection = Collection.objects.create(name="cranfield-eval")
    docs = _documents(base, collection, needed)
    topics = {}
    for line in (base / "topics.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["qid"] in QIDS:
            topics[row["qid"]] = Topic.objects.create(
                collection=collection, qid=row["qid"], title=row["title"]
            )
    stored = Qrels.objects.create(collection=collection, name="cranfield")
    QrelsEntry.objects.bulk_create(
        QrelsEntry(qrels=stored, topic=topics[q], document=docs[d], relevance=rel)
        for q, rows in qrels.items()
        for d, rel in rows.items()
    )
    run_rows = []
    for name, scores in runs.items():
        run = Run.objects.create(collection=collection, name=name)
        for qid, ranked in scores.items():
            order = sorted(ranked.items(), key=lambda kv: (-kv[1], kv[0]))
            run_rows += [
                RunEntry(run=run, topic=topics[qid], document=docs[d], rank=i, score=s)
                for i, (d, s) in enumerate(order, 1)
            ]
    RunEntry.objects.bulk_create(run_rows)
    pool = pool_build(
        collection=collection, runs=Run.objects.filter(collection=collection),
        depth=10, name="depth10",
    )  # fmt: skip
    sample = sample_draw(pool=pool, size=8, method="statap", seed=7, name="statap8")
    if judge:
        _judge(sample, qrels, assessor)
    job = match_job_launch(
        collection=collection, topics=list(topics.values()), source="pool", pool=pool
    )
    job = run_inline(job)
    return JudgedJob(collection, topics, stored, pool, sample, job, qrels, runs)


def _judge(sample: Sample, qrels: dict[str, dict[str, int]], assessor) -> None:
    """Judge every sampled document with the real qrels; nugget the first two
    relevant ones of each topic (their first sentence)."""
    rows = SampleDocument.objects.filter(sample=sample).select_related(
        "topic", "document"
    )
    nuggets: dict[str, int] = {}
    for row in rows.order_by("topic__qid", "order"):
        relevant = qrels.get(row.topic.qid, {}).get(row.document.docno, 0) >= 1
        Judgment.objects.create(
            topic=row.topic, document=row.document, assessor=assessor,
            relevance=int(relevant),
        )  # fmt: skip
        if relevant and nuggets.get(row.topic.qid, 0) < 2 and row.document.text:
            text = row.document.text
            end = text.find(" . ") + 1 or len(text)
            Nugget.objects.create(
                topic=row.topic, assessor=assessor, document=row.document, start=0,
                end=end, span_text=text[:end], text=text[:end], grade=1,
            )  # fmt: skip
            nuggets[row.topic.qid] = nuggets.get(row.topic.qid, 0) + 1
