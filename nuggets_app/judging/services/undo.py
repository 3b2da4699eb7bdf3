"""Undo: take back the last change of an assessor's work on one document.

The last change not yet taken back (and not itself an undo) is reverted through the
same writes as any change, and the revert is kept in the history as an ``undo`` of it:
a grade goes back to what it was, a new nugget is deleted, an edited nugget gets its
earlier fields again, and a deleted nugget comes back with its id, span and text.
Pressed again, undo takes back the change before that one.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.db import transaction
from django.db.models import F

from nuggets_app.judging.services.changes import (
    change_record,
    judgment_snapshot,
    nugget_snapshot,
)
from nuggets_app.judging.services.judgments import (
    JudgingError,
    judgment_lock,
    judgment_set,
)
from nuggets_app.judging.services.nuggets import (
    nugget_change_record,
    nugget_embed_later,
)
from nuggets_app.models import Judgment, Nugget, WorkChange

# The nugget fields an edit may change (and an undo restores).
EDITABLE = ("text", "keywords", "grade", "aspect")


class NothingToUndo(JudgingError):
    """No change of this document is left to take back."""

    status = 409


def undoable_change(
    *, owner_id: int, topic_id: int, document_id: int, quality_check: bool = False
) -> WorkChange | None:
    """The last change of the owner's work on the document that undo would revert:
    of its judgments, only the one in the role of the queue item (a check of a known
    answer, or a label); the other is another record."""
    other = Judgment.objects.filter(
        assessor_id=owner_id,
        topic_id=topic_id,
        document_id=document_id,
        quality_check=not quality_check,
    )
    return (
        WorkChange.objects.filter(
            owner_id=owner_id,
            topic_id=topic_id,
            document_id=document_id,
            undone=False,
            undo_of__isnull=True,
        )
        .exclude(kind=WorkChange.JUDGMENT, object_id__in=other.values("pk"))
        .order_by("-id")
        .first()
    )


def change_undo(
    *,
    actor: Any,
    owner_id: int,
    topic_id: int,
    document_id: int,
    quality_check: bool = False,
) -> WorkChange:
    """Revert the last undoable change of ``owner_id``'s work on the document, its
    judgment in the role ``quality_check`` (for the owner or staff: the caller checks
    who may). Returns the undo's own change; ``NothingToUndo`` when there is none
    left."""
    with transaction.atomic():
        last = undoable_change(
            owner_id=owner_id,
            topic_id=topic_id,
            document_id=document_id,
            quality_check=quality_check,
        )
        # Locked and read again: two undos at once never revert one change twice.
        locked = WorkChange.objects.select_for_update().filter(undone=False)
        change = locked.filter(pk=last.pk).first() if last else None
        if change is None:
            raise NothingToUndo("nothing left to undo on this document")
        if change.kind == WorkChange.JUDGMENT:
            undo = _judgment_back(change, actor)
        else:
            undo = _nugget_back(change, actor)
        change.undone = True
        change.save(update_fields=["undone"])
    return undo


def _judgment_back(change: WorkChange, actor: Any) -> WorkChange:
    relevance = change.before["relevance"] if change.before else None
    judgment, _ = judgment_set(
        row=judgment_lock(change.object_id),
        actor=actor,
        relevance=relevance,
        undo_of=change,
    )
    undo = WorkChange.objects.filter(undo_of=change).first()
    if undo is None:  # the grade is already what undo restores: kept as a no-op
        undo = change_record(
            kind=WorkChange.JUDGMENT,
            object_id=judgment.pk,
            topic_id=change.topic_id,
            document_id=change.document_id,
            owner_id=change.owner_id,
            actor=actor,
            before=judgment_snapshot(judgment),
            after=judgment_snapshot(judgment),
            undo_of=change,
        )
    return undo


def _nugget_back(change: WorkChange, actor: Any) -> WorkChange:
    before, after = change.before, change.after
    row = Nugget.objects.select_for_update().filter(pk=change.object_id).first()
    if before is None:  # created: delete it
        if row is None:
            raise NothingToUndo("the nugget made then is already gone")
        snapshot = nugget_snapshot(row)
        row.delete()
        row.pk = change.object_id
        return nugget_change_record(
            row, actor=actor, before=snapshot, after=None, undo_of=change
        )
    if after is None:  # deleted: make it again, as it was
        if row is not None:
            raise NothingToUndo("the deleted nugget is back already")
        fields = {k: v for k, v in before.items() if k != "client_uuid"}
        fields["version"] = before["version"] + 1
        row = Nugget.objects.create(
            pk=change.object_id,
            topic_id=change.topic_id,
            document_id=change.document_id,
            assessor_id=change.owner_id,
            client_uuid=uuid.UUID(before["client_uuid"]),
            **fields,
        )
        undo = nugget_change_record(
            row, actor=actor, before=None, after=nugget_snapshot(row), undo_of=change
        )
    else:  # edited: its earlier fields again
        if row is None:
            raise NothingToUndo("the edited nugget has been deleted since")
        snapshot = nugget_snapshot(row)
        restored = {name: before[name] for name in EDITABLE}
        Nugget.objects.filter(pk=row.pk).update(**restored, version=F("version") + 1)
        row.refresh_from_db()
        undo = nugget_change_record(
            row,
            actor=actor,
            before=snapshot,
            after=nugget_snapshot(row),
            undo_of=change,
        )
    nugget_embed_later(row.pk)
    return undo
