"""Reads of the judges: the collection's judges, a judge's labels in the audit's
terms, and a document with every label of it."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from nuggets_app.errors import DomainError
from nuggets_app.judging.aggregation import human_labels
from nuggets_app.models import (
    Collection,
    Document,
    Judge,
    JudgeLabel,
    Topic,
)

# A judge's probability or score at or above this counts as its "relevant" (scores:
# when every score lies in [0, 1] and the judge has no threshold of its own).
PROBABILITY_CUT = 0.5


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


def _probability_relevant(probs: dict[str, float], level: int) -> float:
    if "yes" in probs:
        return probs["yes"]
    return sum(p for grade, p in probs.items() if int(grade) >= level)


def judge_values(*, judge: Judge, level: int) -> dict[str, dict[str, float]]:
    """``{qid: {docno: value}}`` of the judge's labels: a graded judge's grade, a
    probability judge's probability of a grade >= ``level`` (or of yes), a score
    judge's score. The audit and the job's relevance model read the same values."""
    values: dict[str, dict[str, float]] = {}
    rows = JudgeLabel.objects.filter(judge=judge).values_list(
        "topic__qid", "docno", "grade", "score", "probabilities"
    )
    for qid, docno, grade, score, probs in rows.iterator(chunk_size=5000):
        # The importer sets the one field of the judge's kind.
        if judge.kind == Judge.Kind.GRADED and grade is not None:
            value = float(grade)
        elif judge.kind == Judge.Kind.PROBABILITIES and probs:
            value = _probability_relevant(probs, level)
        elif score is not None:
            value = float(score)
        else:
            continue
        values.setdefault(qid, {})[docno] = value
    return values


def judge_reading(*, judge: Judge, level: int) -> JudgeReading:
    """The judge's labels in the audit's terms: graded judges by their grade (relevant
    at the collection's level); probability judges by their probability of a grade
    >= the level (or of yes), relevant from 0.5; score judges by their score,
    relevant from the judge's threshold (0.5 for scores in [0, 1])."""
    values = judge_values(judge=judge, level=level)
    if judge.kind == Judge.Kind.GRADED:
        return JudgeReading(values, float(level), "grade")
    if judge.kind == Judge.Kind.PROBABILITIES:
        return JudgeReading(values, PROBABILITY_CUT, "probability of relevance")
    if judge.threshold is not None:
        return JudgeReading(values, judge.threshold, "score")
    if all(0.0 <= v <= 1.0 for docs in values.values() for v in docs.values()):
        return JudgeReading(values, PROBABILITY_CUT, "score")
    raise JudgeAuditError(
        f"judge {judge.name!r} gives scores outside [0, 1] and has no threshold: "
        "import it again with --threshold (the score from which it calls a "
        "document relevant)"
    )


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
