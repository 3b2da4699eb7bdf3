"""The history of human work: each change of a judgment or nugget as a ``WorkChange``.

Every service that writes a judgment or an assessor's nugget records the change in
the same transaction (who made it, whose work it is, the fields before and after), so
the history is never behind the rows it describes.
"""

from __future__ import annotations

import uuid
from typing import Any

from nuggets_app.models import Judgment, Nugget, WorkChange

# The nugget fields kept in history: enough to restore a deleted nugget as it was.
NUGGET_FIELDS = (
    "start",
    "end",
    "span_text",
    "text",
    "keywords",
    "grade",
    "aspect",
    "version",
)


def judgment_snapshot(judgment: Judgment | None) -> dict | None:
    """What the history keeps of a judgment: its relevance and version."""
    if judgment is None:
        return None
    return {"relevance": judgment.relevance, "version": judgment.version}


def nugget_snapshot(nugget: Nugget | None) -> dict | None:
    """What the history keeps of a nugget (its ``client_uuid`` as text)."""
    if nugget is None:
        return None
    fields = {name: getattr(nugget, name) for name in NUGGET_FIELDS}
    return {**fields, "client_uuid": str(nugget.client_uuid)}


def change_record(
    *,
    kind: str,
    object_id: int,
    topic_id: int,
    document_id: int,
    owner_id: int,
    actor: Any,
    before: dict | None,
    after: dict | None,
    client_uuid: uuid.UUID | None = None,
    undo_of: WorkChange | None = None,
    note: str = "",
) -> WorkChange:
    """Record one change (call it inside the transaction that makes the change)."""
    return WorkChange.objects.create(
        kind=kind,
        object_id=object_id,
        topic_id=topic_id,
        document_id=document_id,
        owner_id=owner_id,
        actor=actor,
        before=before,
        after=after,
        client_uuid=client_uuid,
        undo_of=undo_of,
        note=note[:200],
    )
