"""Recording relevance judgments and time on task.

Every write checks that the assessor was assigned the topic and that the document is in
that assignment's sample, and runs in one transaction. A judgment row is unique per
(topic, document, assessor), so concurrent saves from two tabs converge on one row.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from nuggets_app.models import Assignment, Document, Judgment, SampleDocument, Topic

# One heartbeat or save never adds more than this much time on task: a client that was
# suspended for hours must not inflate the figure.
MAX_ACTIVE_SECONDS_DELTA = 600.0


class JudgingError(Exception):
    """A judging or nugget action the server refuses; ``status`` is the HTTP answer
    (400 bad value, 404 not yours, 409 version conflict, 422 span mismatch)."""

    status = 400

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class NotAssigned(JudgingError):
    """The assessor has no assignment covering this topic and document."""

    status = 404


# An assignment and one of its queue items, both read in this request (the judging
# views' access check): they prove the assignment without asking the database again.
Slot = tuple[Assignment, SampleDocument]


def _slot_covers(slot: Slot, assessor: Any, topic: Topic, document: Document) -> bool:
    assignment, item = slot
    return (
        assignment.assessor_id == assessor.pk
        and assignment.topic_id == topic.pk == item.topic_id
        and assignment.sample_id == item.sample_id
        and item.document_id == document.pk
    )


def assignment_check(
    *, assessor: Any, topic: Topic, document: Document, slot: Slot | None = None
) -> None:
    """Raise ``NotAssigned`` unless ``document`` is in the sample of one of the
    assessor's assignments for ``topic`` (no query when ``slot`` shows it)."""
    if slot is not None and _slot_covers(slot, assessor, topic, document):
        return
    covered = SampleDocument.objects.filter(
        topic=topic,
        document=document,
        sample__assignments__topic=topic,
        sample__assignments__assessor=assessor,
    ).exists()
    if not covered:
        raise NotAssigned(
            f"document {document.docno} of topic {topic.qid} is not assigned to you"
        )


def grade_check(*, topic: Topic, value: int | None, field: str) -> None:
    """Raise ``JudgingError`` unless ``value`` is None or one of the collection's grades."""
    if value is None:
        return
    allowed = sorted(g["value"] for g in topic.collection.grades)
    if value not in allowed:
        raise JudgingError(f"{field} {value} is not one of {allowed}", field=field)


def _delta_check(seconds: float) -> float:
    if not 0 <= seconds <= MAX_ACTIVE_SECONDS_DELTA:
        raise JudgingError(
            f"active_seconds_delta {seconds} is outside [0, {MAX_ACTIVE_SECONDS_DELTA:g}]",
            field="active_seconds_delta",
        )
    return float(seconds)


def _upsert(
    *, assessor: Any, topic: Topic, document: Document, changes: dict[str, Any]
) -> Judgment:
    """Update the judgment row, or create it; race-free through the unique constraint."""
    key = {"topic": topic, "document": document, "assessor": assessor}
    delta = changes.pop("active_seconds_delta")
    update = {**changes, "active_seconds": F("active_seconds") + delta}
    update["updated_at"] = timezone.now()
    if not Judgment.objects.filter(**key).update(**update):
        try:
            # Savepoint: a concurrent insert of the same key must not spoil the outer
            # transaction; the loser then updates the winner's row.
            with transaction.atomic():
                return Judgment.objects.create(**key, **changes, active_seconds=delta)
        except IntegrityError:
            Judgment.objects.filter(**key).update(**update)
    return Judgment.objects.get(**key)


def judgment_record(
    *,
    assessor: Any,
    topic: Topic,
    document: Document,
    relevance: int | None,
    active_seconds_delta: float = 0,
    slot: Slot | None = None,
) -> Judgment:
    """Set the assessor's relevance for (topic, document) and add time on task.

    ``relevance=None`` records the document as seen but skipped. Raises
    ``NotAssigned`` (not the assessor's work) or ``JudgingError`` (bad grade or time).
    """
    grade_check(topic=topic, value=relevance, field="relevance")
    delta = _delta_check(active_seconds_delta)
    with transaction.atomic():
        assignment_check(assessor=assessor, topic=topic, document=document, slot=slot)
        return _upsert(
            assessor=assessor,
            topic=topic,
            document=document,
            changes={"relevance": relevance, "active_seconds_delta": delta},
        )


def judgment_time_add(
    *,
    assessor: Any,
    topic: Topic,
    document: Document,
    active_seconds_delta: float,
    slot: Slot | None = None,
) -> Judgment:
    """Add idle-aware time on task (a heartbeat) without touching the relevance.

    A document with time but no judgment yet gets a row with an empty relevance.
    """
    delta = _delta_check(active_seconds_delta)
    with transaction.atomic():
        assignment_check(assessor=assessor, topic=topic, document=document, slot=slot)
        return _upsert(
            assessor=assessor,
            topic=topic,
            document=document,
            changes={"active_seconds_delta": delta},
        )
