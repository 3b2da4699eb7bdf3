"""Reads of the history of human work: the changes of one assessor's judgment and
nuggets on one document, as the judging page lists them (newest first)."""

from __future__ import annotations

from typing import Any

from nuggets_app.models import WorkChange

# How many changes the page lists (the history itself keeps every one).
SHOWN = 50


def _what(change: WorkChange) -> str:
    if change.kind == WorkChange.JUDGMENT:
        return "grade"
    if change.before is None:
        return "nugget made"
    return "nugget deleted" if change.after is None else "nugget edited"


def _side(change: WorkChange, state: dict | None) -> Any:
    """The grade, or the nugget's text, on one side of a change (None: no row)."""
    if state is None:
        return None
    return state["relevance"] if change.kind == WorkChange.JUDGMENT else state["text"]


def document_history(*, owner_id: int, topic_id: int, document_id: int) -> list[dict]:
    """The last ``SHOWN`` changes of the owner's work on the document: what changed,
    from what to what, who changed it (``by``), when (``at``, ISO 8601), whether it is
    an undo and whether it was undone. One query."""
    changes = (
        WorkChange.objects.filter(
            owner_id=owner_id, topic_id=topic_id, document_id=document_id
        )
        .select_related("actor")
        .order_by("-id")[:SHOWN]
    )
    return [
        {
            "id": c.pk,
            "kind": c.kind,
            "object": c.object_id,
            "what": _what(c),
            "from": _side(c, c.before),
            "to": _side(c, c.after),
            "by": c.actor.get_username(),
            "at": c.at.isoformat(),
            "undo": c.undo_of_id is not None,
            "undone": c.undone,
            "note": c.note,
        }
        for c in changes
    ]
