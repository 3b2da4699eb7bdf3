"""The adjudication queue: documents whose assessors disagree, and what each gave.

Two assessors disagree on a document when one's grade is relevant at the collection's
relevance level and another's is not; ``spread`` keeps only the documents whose
grades lie more than one grade apart. Judgments on known answers (checks of the
assessors) are not part of it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from nuggets_app.ir.aggregation import Aggregation, grade_combine
from nuggets_app.judging.selectors.labels import aggregation_of
from nuggets_app.models import (
    Adjudication,
    Collection,
    Document,
    Judgment,
    Nugget,
    Topic,
    WorkChange,
)


@dataclass
class AssessorWork:
    """One assessor's grade of the document, time on it, and nuggets in it."""

    username: str
    relevance: int
    active_seconds: float
    guidelines_version: int | None
    updated_at: object
    nuggets: list[dict] = field(default_factory=list)


@dataclass
class Disagreement:
    """A (topic, document) of the queue, with the assessors' work and the decision
    (None while open)."""

    topic_id: int
    qid: str
    document_id: int
    docno: str
    grades: dict[str, int]
    adjudicated: int | None
    adjudication_version: int
    # The grade the collection's rule would give without a decision.
    fallback: int

    @property
    def spread(self) -> int:
        return max(self.grades.values()) - min(self.grades.values())


def disagreements(
    *,
    collection: Collection,
    qids: list[str] | None = None,
    assessor: str | None = None,
    spread: bool = False,
    open_only: bool = False,
) -> list[Disagreement]:
    """The collection's disagreements in topic then docno order, filtered by topics,
    by an assessor among those who judged, by a spread of more than one grade, and
    to those not adjudicated yet (``open_only``). Three queries."""
    level = collection.relevance_level
    topics = Topic.objects.filter(collection=collection)
    if qids:
        topics = topics.filter(qid__in=qids)
    rows = (
        Judgment.objects.filter(
            topic__in=topics, relevance__isnull=False, quality_check=False
        )
        .order_by("topic_id", "document_id", "assessor__username")
        .values_list(
            "topic_id",
            "topic__qid",
            "document_id",
            "document__docno",
            "assessor__username",
            "relevance",
        )
    )
    grades: dict[tuple[int, int], dict[str, int]] = defaultdict(dict)
    names: dict[tuple[int, int], tuple[str, str]] = {}
    for topic_id, qid, doc_id, docno, username, rel in rows:
        if rel is None:
            continue
        grades[(topic_id, doc_id)][username] = rel
        names[(topic_id, doc_id)] = (qid, docno)
    decided = {
        (t, d): (rel, version)
        for t, d, rel, version in Adjudication.objects.filter(
            topic__in=topics
        ).values_list("topic_id", "document_id", "relevance", "version")
    }
    fallback_rule = _fallback(aggregation_of(collection))
    out = []
    for key, given in grades.items():
        if len({g >= level for g in given.values()}) < 2:
            continue
        if assessor and assessor not in given:
            continue
        item = Disagreement(
            topic_id=key[0],
            qid=names[key][0],
            document_id=key[1],
            docno=names[key][1],
            grades=given,
            adjudicated=decided[key][0] if key in decided else None,
            adjudication_version=decided[key][1] if key in decided else 0,
            fallback=grade_combine(given, fallback_rule)[0],
        )
        if spread and item.spread <= 1:
            continue
        if open_only and item.adjudicated is not None:
            continue
        out.append(item)
    out.sort(key=lambda d: (_qid_key(d.qid), d.docno))
    return out


def _fallback(aggregation: Aggregation) -> Aggregation:
    """The rule as it stands without a decision."""
    if aggregation.rule != "adjudicated":
        return aggregation
    return Aggregation(
        rule=aggregation.fallback,
        primary=aggregation.primary,
        ties=aggregation.ties,
        fallback="highest",
    )


def disagreement_work(*, topic: Topic, document: Document) -> list[AssessorWork]:
    """Each assessor's grade, time and nuggets for (topic, document), by username."""
    work = {
        name: AssessorWork(name, rel or 0, secs, gv, at)
        for name, rel, secs, gv, at in Judgment.objects.filter(
            topic=topic, document=document, relevance__isnull=False
        )
        .order_by("assessor__username")
        .values_list(
            "assessor__username",
            "relevance",
            "active_seconds",
            "guidelines_version",
            "updated_at",
        )
    }
    for name, start, end, span, text in (
        Nugget.objects.filter(topic=topic, document=document, assessor__isnull=False)
        .order_by("start", "pk")
        .values_list("assessor__username", "start", "end", "span_text", "text")
    ):
        if name in work:
            work[name].nuggets.append(
                {"start": start, "end": end, "span_text": span, "text": text}
            )
    return list(work.values())


def adjudication_history(*, topic: Topic, document: Document) -> list[WorkChange]:
    """The changes of the decision on (topic, document), oldest first."""
    return list(
        WorkChange.objects.filter(
            kind=WorkChange.ADJUDICATION, topic=topic, document=document
        )
        .select_related("actor")
        .order_by("id")
    )


def _qid_key(qid: str) -> tuple[int, int | str]:
    return (0, int(qid)) if qid.isdigit() else (1, qid)
