"""Reads of the judges: the collection's judges, a judge's labels in the audit's
terms, and a document with every label of it."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from nuggets_app.errors import DomainError
from nuggets_app.ir.judge_values import WHAT, judge_cut, label_value
from nuggets_app.judging.selectors.labels import human_labels
from nuggets_app.models import (
    Collection,
    Document,
    Judge,
    JudgeLabel,
    Topic,
)


class JudgeAuditError(DomainError):
    """The audit cannot be made as asked; the message says why."""


@dataclass(frozen=True)
class JudgeReading:
    """A judge's labels as the audit reads them: ``values`` (qid -> docno -> the
    judge's grade, probability of relevance or score) and ``level``, the value from
    which the judge calls a document relevant; ``what`` names the values."""

    values: dict[str, dict[str, float]]
    level: float
    what: str


def judge_values(*, judge: Judge, level: int) -> dict[str, dict[str, float]]:
    """``{qid: {docno: value}}`` of the judge's labels: a graded judge's grade, a
    probability judge's probability of a grade >= ``level`` (or of yes), a score
    judge's score (:mod:`nuggets_app.ir.judge_values`). The audit, the sample design
    and the job's relevance model read the same values."""
    values: dict[str, dict[str, float]] = {}
    rows = JudgeLabel.objects.filter(judge=judge).values_list(
        "topic__qid", "docno", "grade", "score", "probabilities"
    )
    for qid, docno, grade, score, probs in rows.iterator(chunk_size=5000):
        # The importer sets the one field of the judge's kind.
        value = label_value(judge.kind, grade, score, probs, level)
        if value is not None:
            values.setdefault(qid, {})[docno] = value
    return values


def judge_reading(*, judge: Judge, level: int) -> JudgeReading:
    """The judge's labels in the audit's terms: graded judges by their grade (relevant
    at the collection's level); probability judges by their probability of a grade
    >= the level (or of yes), relevant from 0.5; score judges by their score,
    relevant from the judge's threshold (0.5 for scores in [0, 1])
    (:mod:`nuggets_app.ir.judge_values`)."""
    values = judge_values(judge=judge, level=level)
    every = (v for docs in values.values() for v in docs.values())
    cut = judge_cut(judge.kind, every, level, judge.threshold)
    if cut is None:
        raise JudgeAuditError(
            f"judge {judge.name!r} gives scores outside [0, 1] and has no threshold: "
            "import it again with --threshold (the score from which it calls a "
            "document relevant)"
        )
    return JudgeReading(values, cut, WHAT[judge.kind])


def collection_judges(*, collection: Collection) -> list[Judge]:
    """The collection's judges by name, each with ``label_count`` (its labels) and
    ``beyond_count`` (those of documents the collection does not hold)."""
    return list(
        Judge.objects.filter(collection=collection)
        .annotate(
            label_count=Count("labels"),
            beyond_count=Count("labels", filter=Q(labels__document__isnull=True)),
        )
        .order_by("name")
    )


@dataclass(frozen=True)
class DocumentLabels:
    """A document of a topic with every judge's label of it and the people's label
    (None: not judged by people)."""

    topic: Topic
    document: Document
    judges: list[tuple[str, str]]
    people: int | None


def _label_text(label: JudgeLabel) -> str:
    if label.grade is not None:
        return f"grade {label.grade}"
    if label.score is not None:
        return f"score {label.score:g}"
    probs = label.probabilities or {}
    return ", ".join(f"P({grade}) {p:g}" for grade, p in probs.items())


def document_labels(*, collection: Collection, qid: str, docno: str) -> DocumentLabels:
    """The labels of ``docno`` for topic ``qid`` (``DoesNotExist`` when the
    collection does not hold the topic or the document)."""
    topic = Topic.objects.get(collection=collection, qid=qid)
    document = Document.objects.get(collection=collection, docno=docno)
    labels = (
        JudgeLabel.objects.filter(
            judge__collection=collection, topic=topic, docno=docno
        )
        .select_related("judge")
        .order_by("judge__name")
    )
    people = human_labels([topic.pk]).get((topic.pk, document.pk))
    return DocumentLabels(
        topic,
        document,
        [(label.judge.name, _label_text(label)) for label in labels],
        people.grade if people is not None else None,
    )
