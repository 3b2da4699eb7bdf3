"""A collection's relevance level: "relevant at grade >= k" for binary decisions.

Graded collections disagree on what counts as relevant: TREC Deep Learning calls a
passage relevant at grade 2 and up (of 0-3), most older collections at 1. The level is
set on the collection (at import or on its staff page); every matching job copies it
at launch, so a later change never moves a finished job's figures.

:func:`relevance_level_check` is the one check of a level, for the commands' option,
the staff page's form and a job's launch: a grade of 1 or more
that some grade of the collection reaches (its grade scale, or a grade stored in its
judgments or imported qrels); a level above every grade would call nothing relevant.
"""

from __future__ import annotations

from django.db.models import Max

from nuggets_app.errors import DomainError
from nuggets_app.models import Collection, Judgment, QrelsEntry


class RelevanceLevelError(DomainError):
    """The level cannot be set as asked; the message says why."""


def collection_grade_max(collection: Collection) -> int:
    """The highest grade of ``collection``: of its scale, its judgments and its
    imported qrels."""
    values = [int(g["value"]) for g in collection.grades]
    for found in (
        Judgment.objects.filter(topic__collection=collection).aggregate(
            top=Max("relevance")
        )["top"],
        QrelsEntry.objects.filter(qrels__collection=collection).aggregate(
            top=Max("relevance")
        )["top"],
    ):
        if found is not None:
            values.append(int(found))
    return max(values, default=1)


def relevance_level_check(*, collection: Collection, level: int) -> int:
    """``level`` when it is a grade of 1 or more that some grade of ``collection``
    reaches, else RelevanceLevelError with one sentence."""
    if level < 1:
        raise RelevanceLevelError(
            f"the relevance level is a grade of 1 or more (relevant at grade >= it), "
            f"got {level}"
        )
    top = collection_grade_max(collection)
    if level > top:
        raise RelevanceLevelError(
            f"no grade of {collection.name} reaches {level}: its grades go up to "
            f"{top}, so nothing would be relevant at grade >= {level}"
        )
    return level


def relevance_level_set(*, collection: Collection, level: int | None) -> Collection:
    """Set ``collection``'s level (None: the smallest positive grade of its scale)."""
    if level is not None:
        relevance_level_check(collection=collection, level=level)
    collection.relevance_level_setting = level
    collection.save(update_fields=["relevance_level_setting"])
    return collection
