"""A collection's relevance level: "relevant at grade >= k" for binary decisions.

Graded collections disagree on what counts as relevant: TREC Deep Learning calls a
passage relevant at grade 2 and up (of 0-3), most older collections at 1. The level is
set on the collection (at import or on its staff page); every matching job copies it
at launch, so a later change never moves a finished job's figures.
"""

from __future__ import annotations

from nuggets_app.errors import DomainError
from nuggets_app.models import Collection


class RelevanceLevelError(DomainError):
    """The level cannot be set as asked; the message says why."""


def relevance_level_set(*, collection: Collection, level: int | None) -> Collection:
    """Set ``collection``'s level (None: the smallest positive grade of its scale)."""
    if level is not None and level < 1:
        raise RelevanceLevelError(
            f"the relevance level is a grade of 1 or more (relevant at grade >= it), "
            f"got {level}"
        )
    collection.relevance_level = level
    collection.save(update_fields=["relevance_level"])
    return collection
