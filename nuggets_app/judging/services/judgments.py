"""Recording relevance judgments and time on task.

Every write checks that the assessor was assigned the topic and that the document is in
that assignment's sample. A judgment row is unique per (topic, document, assessor,
role), so concurrent saves from two tabs converge on one row; the role
(``quality_check``) is the queue item's: a known answer interleaved as a check, or a
document to label. The same document can be both, in two queues, and each keeps its
own row. Its ``version`` counts the times its
relevance was set: a save carrying the version it was based on is refused with a
``JudgmentConflict`` when another tab (or staff) changed the grade since, and a save
carrying a ``client_uuid`` is stored once however often it is retried. Every change of
the relevance is kept in the history (``changes``).
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from nuggets_app.errors import DomainError
from nuggets_app.judging.services.changes import change_record, judgment_snapshot
from nuggets_app.judging.services.guidelines import guidelines_current_sql
from nuggets_app.models import (
    Assignment,
    Document,
    Judgment,
    SampleDocument,
    Topic,
    WorkChange,
)
from nuggets_app.operations import queue

# One heartbeat or save never adds more than this much time on task: a client that was
# suspended for hours must not inflate the figure.
MAX_ACTIVE_SECONDS_DELTA = 600.0


class JudgingError(DomainError):
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


class JudgmentConflict(JudgingError):
    """The grade changed since the client read it; ``current`` is the server's
    (``judgment_state``: relevance, version, who changed it and when)."""

    status = 409

    def __init__(self, message: str, *, current: dict) -> None:
        super().__init__(message, field="version")
        self.current = current


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
) -> bool:
    """Raise ``NotAssigned`` unless ``document`` is in the queue of one of the
    assessor's assignments for ``topic`` (no query when ``slot`` shows it); True
    when it is there as a known answer (a check of the assessor), not as drawn."""
    if slot is not None and _slot_covers(slot, assessor, topic, document):
        return slot[1].known
    known = (
        SampleDocument.queue.filter(
            topic=topic,
            document=document,
            sample__assignments__topic=topic,
            sample__assignments__assessor=assessor,
        )
        .order_by("known")
        .values_list("known", flat=True)
        .first()
    )
    if known is None:
        raise NotAssigned(
            f"document {document.docno} of topic {topic.qid} is not assigned to you"
        )
    return known


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
    quality_check: bool = False,
) -> Judgment:
    """Add ``delta`` seconds to the judgment row, creating the row (no relevance,
    version 0) when there is none: one ``INSERT ... ON CONFLICT DO UPDATE``
    statement, atomic and race-free through the unique constraint (two tabs saving
    at once converge on one row). The judging page saves time for every document, so
    round trips count."""
    table = connection.ops.quote_name(Judgment._meta.db_table)
    stamp = connection.ops.adapt_datetimefield_value(timezone.now())
    sql = (
        f"INSERT INTO {table} (topic_id, document_id, assessor_id, relevance, "
        "active_seconds, version, quality_check, created_at, updated_at) "
        "VALUES (%s, %s, %s, NULL, %s, 0, %s, %s, %s) "
        "ON CONFLICT (topic_id, document_id, assessor_id, quality_check) DO UPDATE SET "
        f"active_seconds = {table}.active_seconds + EXCLUDED.active_seconds, "
        "updated_at = EXCLUDED.updated_at "
        "RETURNING id, relevance, active_seconds, version"
    )
    params = [topic.pk, document.pk, assessor.pk, delta, quality_check, stamp, stamp]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        pk, stored_relevance, seconds, version = cursor.fetchone()
    return Judgment(
        pk=pk,
        topic=topic,
        document=document,
        assessor=assessor,
        relevance=stored_relevance,
        active_seconds=float(seconds),
        version=version,
        quality_check=quality_check,
    )


def judgment_state(
    *, assessor_id: int, topic_id: int, document_id: int, quality_check: bool = False
) -> dict:
    """The stored grade of (topic, document) by the assessor in its role (a check of
    a known answer, or a label): ``relevance``, ``version`` (0 when never set), and
    the last change's author (``by``) and time (``at``, ISO 8601), both None when
    there is none."""
    found = (
        Judgment.objects.filter(
            topic_id=topic_id,
            document_id=document_id,
            assessor_id=assessor_id,
            quality_check=quality_check,
        )
        .values_list("pk", "relevance", "version")
        .first()
    )
    pk, relevance, version = found or (None, None, 0)
    last = (
        WorkChange.objects.filter(kind=WorkChange.JUDGMENT, object_id=pk)
        .select_related("actor")
        .order_by("-id")
        .first()
        if pk is not None
        else None
    )
    return {
        "relevance": relevance,
        "version": version,
        "by": last.actor.get_username() if last else None,
        "at": last.at.isoformat() if last else None,
    }


def judgment_lock(judgment_id: int) -> Judgment:
    """The judgment row, locked until the end of the transaction."""
    return Judgment.objects.select_for_update().get(pk=judgment_id)


def judgment_set(
    *,
    row: Judgment,
    actor: Any,
    relevance: int | None,
    version: int | None = None,
    client_uuid: uuid.UUID | None = None,
    undo_of: WorkChange | None = None,
    note: str = "",
) -> tuple[Judgment, bool]:
    """Set the relevance of an existing judgment row and record the change; returns
    ``(row, conflict)``. ``conflict`` is True (and nothing written) when ``version``
    is given and the row is at another one. Setting the grade it already has writes
    nothing. Call it inside a transaction, with ``row`` read locked (``judgment_lock``,
    or the upsert that locks the row it writes)."""
    if version is not None and row.version != version:
        return row, True
    if row.relevance == relevance and row.version > 0:
        return row, False
    before = judgment_snapshot(row) if row.version > 0 else None
    row.relevance, row.version = relevance, row.version + 1
    # The guidelines in force, read inside the same statement (no extra round trip).
    Judgment.objects.filter(pk=row.pk).update(
        relevance=relevance,
        version=row.version,
        updated_at=timezone.now(),
        guidelines_version=guidelines_current_sql(topic_id=row.topic_id),
    )
    change_record(
        kind=WorkChange.JUDGMENT,
        object_id=row.pk,
        topic_id=row.topic_id,
        document_id=row.document_id,
        owner_id=row.assessor_id,
        actor=actor,
        before=before,
        after=judgment_snapshot(row),
        client_uuid=client_uuid,
        undo_of=undo_of,
        note=note,
    )
    return row, False


def _replayed(client_uuid: uuid.UUID | None, assessor: Any) -> Judgment | None:
    """The judgment a retried save already changed (its ``client_uuid`` is in the
    history), or None."""
    if client_uuid is None:
        return None
    change = WorkChange.objects.filter(client_uuid=client_uuid).first()
    if change is None:
        return None
    if change.owner_id != assessor.pk or change.kind != WorkChange.JUDGMENT:
        raise NotAssigned("client_uuid belongs to another change")
    return Judgment.objects.get(pk=change.object_id)


def judgment_record(
    *,
    assessor: Any,
    topic: Topic,
    document: Document,
    relevance: int | None,
    active_seconds_delta: float = 0,
    slot: Slot | None = None,
    version: int | None = None,
    client_uuid: uuid.UUID | None = None,
) -> Judgment:
    """Set the assessor's relevance for (topic, document) and add time on task.

    ``relevance=None`` records the document as seen but skipped. ``version``, when
    given, is the version the client last saw: another one raises
    ``JudgmentConflict`` (the time is still added; the grade is not). A save whose
    ``client_uuid`` already changed the judgment is a retry: the row is returned as
    stored and nothing is added twice. Raises ``NotAssigned`` (not the assessor's
    work) or ``JudgingError`` (bad grade or time).
    """
    grade_check(topic=topic, value=relevance, field="relevance")
    delta = _delta_check(active_seconds_delta)
    known = assignment_check(
        assessor=assessor, topic=topic, document=document, slot=slot
    )
    replayed = _replayed(client_uuid, assessor)
    if replayed is not None:
        return replayed
    with transaction.atomic():
        row = _upsert(
            assessor=assessor,
            topic=topic,
            document=document,
            delta=delta,
            quality_check=known,
        )
        judgment, conflict = judgment_set(
            row=row,
            actor=assessor,
            relevance=relevance,
            version=version,
            client_uuid=client_uuid,
        )
    if conflict:
        current = judgment_state(
            assessor_id=assessor.pk,
            topic_id=topic.pk,
            document_id=document.pk,
            quality_check=known,
        )
        raise JudgmentConflict(
            f"the judgment is at version {current['version']}, not {version}",
            current=current,
        )
    if slot is not None and relevance is not None and slot[1].var_weight is not None:
        # A sample in rounds (only those record var_weight): the next round may be due.
        sample_id = slot[1].sample_id
        transaction.on_commit(
            lambda: queue.task_enqueue(queue.ROUNDS_ADVANCE, sample_id)
        )
    return judgment


def judgment_correct(
    *,
    actor: Any,
    assessor: Any,
    topic: Topic,
    document: Document,
    relevance: int | None,
    note: str = "",
) -> Judgment:
    """Staff correct the grade of an assessor's existing judgment (no time added).
    The change is kept in the history with ``actor`` as its author and ``note`` as
    its reason; the assessor's open page meets it as a newer version. Where the
    assessor judged the document both as a label and as a check of a known answer,
    the label is corrected."""
    grade_check(topic=topic, value=relevance, field="relevance")
    existing = (
        Judgment.objects.filter(topic=topic, document=document, assessor=assessor)
        .order_by("quality_check")
        .first()
    )
    if existing is None:
        raise JudgingError(
            f"{assessor} has no judgment of document {document.docno} "
            f"for topic {topic.qid}"
        )
    with transaction.atomic():
        judgment, _ = judgment_set(
            row=judgment_lock(existing.pk), actor=actor, relevance=relevance, note=note
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
    known = assignment_check(
        assessor=assessor, topic=topic, document=document, slot=slot
    )
    return _upsert(
        assessor=assessor,
        topic=topic,
        document=document,
        delta=delta,
        quality_check=known,
    )
