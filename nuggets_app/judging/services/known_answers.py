"""Known answers: documents with a known grade, interleaved in assessors' queues to
check them.

Staff mark known answers per topic, from imported qrels or from adjudicated
decisions (``known_answers_add``), then interleave them in a sample's queues at a
chosen rate (``known_answers_interleave``). An interleaved document is a queue item
like any other on the page (``SampleDocument.known``), but never a drawn one: the
default manager ``SampleDocument.objects`` leaves it out of every estimate and
export, and the judgments made on it (``Judgment.quality_check``) are never human
labels. So a known answer cannot enter a sample's estimates, let alone twice.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import F

from nuggets_app.errors import DomainError
from nuggets_app.models import (
    Adjudication,
    Collection,
    KnownAnswer,
    Qrels,
    QrelsEntry,
    Sample,
    SampleDocument,
    Topic,
)

# Renumbering moves a queue out of the way first: orders above this are temporary.
_SHIFT = 1_000_000


class KnownAnswerError(DomainError):
    """Known answers refused; the message says why."""


def known_answers_add(
    *,
    collection: Collection,
    source: str,
    qrels: Qrels | None = None,
    qids: list[str] | None = None,
    per_topic: int = 10,
    seed: int = 1,
    created_by: Any = None,
) -> int:
    """Mark up to ``per_topic`` documents per topic as known answers, from the
    entries of ``qrels`` (``source="qrels"``; drawn at random with ``seed``, half
    relevant and half not where the qrels allow) or from every adjudicated decision
    (``source="adjudicated"``). A document already known keeps its first grade.
    Returns how many were added."""
    if per_topic < 1:
        raise KnownAnswerError(f"per_topic must be at least 1, got {per_topic}")
    topics = Topic.objects.filter(collection=collection)
    if qids:
        topics = topics.filter(qid__in=qids)
    if source == "qrels":
        if qrels is None or qrels.collection_id != collection.pk:
            raise KnownAnswerError(
                f"known answers from qrels need qrels of {collection}"
            )
        rows = list(
            QrelsEntry.objects.filter(qrels=qrels, topic__in=topics, subtopic="")
            .order_by("topic_id", "document_id")
            .values_list("topic_id", "document_id", "relevance")
        )
        label = f"qrels:{qrels.name}"
        rows = _balanced(rows, per_topic, seed, collection.relevance_level)
    elif source == "adjudicated":
        rows = list(
            Adjudication.objects.filter(topic__in=topics)
            .order_by("topic_id", "document_id")
            .values_list("topic_id", "document_id", "relevance")
        )
        label = "adjudicated"
    else:
        raise KnownAnswerError(f"source must be qrels or adjudicated, got {source!r}")
    known = KnownAnswer.objects.filter(topic__collection=collection)
    with transaction.atomic():
        before = known.count()
        KnownAnswer.objects.bulk_create(
            [
                KnownAnswer(
                    topic_id=t,
                    document_id=d,
                    relevance=rel,
                    source=label,
                    created_by=created_by,
                )
                for t, d, rel in rows
            ],
            ignore_conflicts=True,
        )
        return known.count() - before


def _balanced(
    rows: list[tuple[int, int, int]], per_topic: int, seed: int, level: int
) -> list[tuple[int, int, int]]:
    """Up to ``per_topic`` rows per topic, half relevant at ``level`` where possible."""
    rng = random.Random(seed)
    by_topic: dict[int, list[tuple[int, int, int]]] = {}
    for row in rows:
        by_topic.setdefault(row[0], []).append(row)
    out = []
    for topic_id in sorted(by_topic):
        rel = [r for r in by_topic[topic_id] if r[2] >= level]
        non = [r for r in by_topic[topic_id] if r[2] < level]
        rng.shuffle(rel)
        rng.shuffle(non)
        take_rel = min(len(rel), max(per_topic - len(non), per_topic // 2))
        out.extend(rel[:take_rel] + non[: per_topic - take_rel])
    return out


@dataclass
class Interleaved:
    """What ``known_answers_interleave`` did: items added per topic qid, and the
    topics skipped with the reason."""

    added: dict[str, int]
    skipped: dict[str, str]


def known_answers_interleave(
    *, sample: Sample, rate: float, seed: int = 1
) -> Interleaved:
    """Put ``rate`` known answers per drawn document (rounded, at least one where
    the rate is positive and an answer is available) into each topic's queue of
    ``sample``, at random places after the first document and before the last.

    The queue's positions are renumbered around them (a queue item is found by its
    document, so no judgment moves). Known answers already in the topic's queue, as
    drawn or as a check, are not added; a topic whose queue already holds checks is
    skipped, so running it twice changes nothing."""
    if not 0 < rate <= 1:
        raise KnownAnswerError(f"rate must be in (0, 1], got {rate}")
    if sample.rounds > 1:
        raise KnownAnswerError(
            f"sample {sample.name} is drawn in rounds: a later round could draw a "
            "known answer from the pool; interleave them in a one-shot sample"
        )
    rng = random.Random(seed)
    out = Interleaved(added={}, skipped={})
    with transaction.atomic():
        queue = list(
            SampleDocument.queue.select_for_update()
            .filter(sample=sample)
            .order_by("topic_id", "order")
            .values_list("topic_id", "document_id", "order", "known")
        )
        by_topic: dict[int, list[tuple[int, int, bool]]] = {}
        for topic_id, doc_id, order, known in queue:
            by_topic.setdefault(topic_id, []).append((doc_id, order, known))
        qids = dict(
            Topic.objects.filter(pk__in=list(by_topic)).values_list("pk", "qid")
        )
        answers: dict[int, list[int]] = {}
        for topic_id, doc_id in (
            KnownAnswer.objects.filter(topic_id__in=list(by_topic))
            .order_by("topic_id", "document_id")
            .values_list("topic_id", "document_id")
        ):
            answers.setdefault(topic_id, []).append(doc_id)
        for topic_id in sorted(by_topic, key=lambda t: qids[t]):
            items = by_topic[topic_id]
            qid = qids[topic_id]
            if any(known for _, _, known in items):
                out.skipped[qid] = "already holds known answers"
                continue
            present = {doc_id for doc_id, _, _ in items}
            free = [d for d in answers.get(topic_id, []) if d not in present]
            if not free:
                out.skipped[qid] = "no known answer outside its queue"
                continue
            if len(items) < 2:
                out.skipped[qid] = (
                    "fewer than two drawn documents to place them between"
                )
                continue
            count = min(len(free), max(1, round(rate * len(items))))
            chosen = rng.sample(free, count)
            _renumber(sample, topic_id, items, chosen, rng)
            out.added[qid] = count
    return out


def _renumber(
    sample: Sample,
    topic_id: int,
    items: list[tuple[int, int, bool]],
    chosen: list[int],
    rng: random.Random,
) -> None:
    """Insert ``chosen`` documents between the drawn ones and number the queue
    1, 2, ... again; the last item stays a drawn one (an extension appends after
    the highest order)."""
    layout: list[tuple[int, bool]] = [(doc_id, False) for doc_id, _, _ in items]
    for doc_id in chosen:
        # Slots 1..len-1: after the first drawn document, before the last one.
        layout.insert(rng.randint(1, len(layout) - 1), (doc_id, True))
    mine = SampleDocument.queue.filter(sample=sample, topic_id=topic_id)
    mine.update(order=F("order") + _SHIFT)
    new_order = {doc_id: i for i, (doc_id, _) in enumerate(layout, start=1)}
    for doc_id, order in new_order.items():
        if doc_id in chosen:
            continue
        mine.filter(document_id=doc_id).update(order=order)
    SampleDocument.queue.bulk_create(
        [
            SampleDocument(
                sample=sample,
                topic_id=topic_id,
                document_id=doc_id,
                inclusion_prob=1.0,
                order=new_order[doc_id],
                known=True,
            )
            for doc_id in chosen
        ]
    )
