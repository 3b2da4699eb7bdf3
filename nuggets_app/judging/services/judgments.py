"""Recording relevance judgments and time on task.

Every write checks that the assessor was assigned the topic and that the document is in
that assignment's sample, and is one atomic statement. A judgment row is unique per
(topic, document, assessor), so concurrent saves from two tabs converge on one row.
"""

from __future__ import annotations

from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from nuggets_app.models import Assignment, Document, Judgment, SampleDocument, Topic
from nuggets_app.operations import queue

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
    *,
    assessor: Any,
    topic: Topic,
    document: Document,
    delta: float,
    relevance: int | None = None,
    set_relevance: bool = False,
) -> Judgment:
    """Add ``delta`` seconds to the judgment row (and set its relevance), creating the
    row when there is none: one ``INSERT ... ON CONFLICT DO UPDATE`` statement, atomic
    and race-free through the unique constraint (two tabs saving at once converge on
    one row). It replaced an update, a savepoint, an insert and a re-read: the
    judging page saves a judgment for every document, so round trips count."""
    table = connection.ops.quote_name(Judgment._meta.db_table)
    stamp = connection.ops.adapt_datetimefield_value(timezone.now())
    relevance_set = "relevance = EXCLUDED.relevance, " if set_relevance else ""
    sql = (
        f"INSERT INTO {table} (topic_id, document_id, assessor_id, relevance, "
        "active_seconds, created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s) "
        f"ON CONFLICT (topic_id, document_id, assessor_id) DO UPDATE SET "
        f"{relevance_set}active_seconds = {table}.active_seconds + "
        "EXCLUDED.active_seconds, updated_at = EXCLUDED.updated_at "
        "RETURNING id, relevance, active_seconds"
    )
    params = [topic.pk, document.pk, assessor.pk, relevance, delta, stamp, stamp]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        pk, stored_relevance, seconds = cursor.fetchone()
    return Judgment(
        pk=pk,
        topic=topic,
        document=document,
        assessor=assessor,
        relevance=stored_relevance,
        active_seconds=float(seconds),
    )


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
    assignment_check(assessor=assessor, topic=topic, document=document, slot=slot)
    judgment = _upsert(
        assessor=assessor,
        topic=topic,
        document=document,
        delta=delta,
        relevance=relevance,
        set_relevance=True,
    )
    if slot is not None and relevance is not None and slot[1].var_weight is not None:
        # A sample in rounds (only those record var_weight): the next round may be due.
        sample_id = slot[1].sample_id
        transaction.on_commit(
            lambda: queue.task_enqueue(queue.ROUNDS_ADVANCE, sample_id)
        )
    return judgment


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
    assignment_check(assessor=assessor, topic=topic, document=document, slot=slot)
    return _upsert(assessor=assessor, topic=topic, document=document, delta=delta)
