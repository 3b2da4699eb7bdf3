"""A small real judging world for the assessor-UI tests: Cranfield documents and
topics from the shared data, a sample per topic, and assignments for the personas."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path

from nuggets_app import models as m
from tests import factories as f

# Cranfield topic 1 and documents from its qrels (relevant: 184, 29, 31, 12, 51) plus
# two that the qrels do not list for it.
TOPIC_1_DOCNOS = ["184", "29", "31", "12", "51", "1", "2"]
TOPIC_2_DOCNOS = ["12", "1", "2"]


def cranfield_docs(shared_data: Path, docnos: list[str]) -> dict[str, dict]:
    """The named documents of the Cranfield collection, as parsed JSON objects."""
    wanted, found = set(docnos), {}
    with gzip.open(shared_data / "cranfield" / "docs.jsonl.gz", "rt") as fh:
        for line in fh:
            doc = json.loads(line)
            if doc["docno"] in wanted:
                found[doc["docno"]] = doc
    return found


def cranfield_topics(shared_data: Path, qids: list[str]) -> dict[str, dict]:
    """The named Cranfield topics."""
    with open(shared_data / "cranfield" / "topics.jsonl") as fh:
        topics = (json.loads(line) for line in fh)
        return {t["qid"]: t for t in topics if t["qid"] in qids}


@dataclass
class JudgingAssignments:
    """Two Cranfield topics, their documents and the two assessors' assignments."""

    collection: m.Collection
    topic: m.Topic
    other_topic: m.Topic
    docs: dict[str, m.Document]
    assignment: m.Assignment
    other_assignment: m.Assignment
    extra: dict = field(default_factory=dict)

    def position(self, docno: str) -> int:
        return TOPIC_1_DOCNOS.index(docno) + 1


def build_world(shared_data: Path, assessor, other_assessor) -> JudgingAssignments:
    """Alice (``assessor``) is assigned topic 1; Bob (``other_assessor``) topic 2."""
    raw = cranfield_docs(shared_data, TOPIC_1_DOCNOS)
    topics = cranfield_topics(shared_data, ["1", "2"])
    collection = f.CollectionFactory(name="cranfield")
    docs = {
        docno: f.DocumentFactory(
            collection=collection,
            docno=docno,
            title=raw[docno]["title"],
            text=raw[docno]["text"],
        )
        for docno in TOPIC_1_DOCNOS
    }
    topic, other_topic = (
        f.TopicFactory(
            collection=collection,
            qid=qid,
            title=topics[qid]["title"],
            description=topics[qid]["description"],
            aspects=[
                {"id": "a1", "text": "similarity laws"},
                {"id": "a2", "text": "models"},
            ],
        )
        for qid in ("1", "2")
    )
    pool = f.PoolFactory(collection=collection)
    sample = f.SampleFactory(pool=pool)
    for order, docno in enumerate(TOPIC_1_DOCNOS, start=1):
        f.SampleDocumentFactory(
            sample=sample, topic=topic, document=docs[docno], order=order
        )
    for order, docno in enumerate(TOPIC_2_DOCNOS, start=1):
        f.SampleDocumentFactory(
            sample=sample, topic=other_topic, document=docs[docno], order=order
        )
    return JudgingAssignments(
        collection=collection,
        topic=topic,
        other_topic=other_topic,
        docs=docs,
        assignment=f.AssignmentFactory(sample=sample, topic=topic, assessor=assessor),
        other_assignment=f.AssignmentFactory(
            sample=sample, topic=other_topic, assessor=other_assessor
        ),
    )
