"""What several workflow commands share (a ``_`` module is not a command itself)."""

from __future__ import annotations

from typing import TypeVar

from django.core.management.base import CommandError
from django.db.models import Model, QuerySet

M = TypeVar("M", bound=Model)


def only_one(objects: QuerySet[M], *, unknown: str, several: str) -> M:
    """The one object of ``objects``, else a CommandError.

    The message is ``unknown`` when there is none and ``several`` when there are more
    (a name shared across collections or pools).
    """
    found = list(objects[:2])
    if not found:
        raise CommandError(unknown)
    if len(found) > 1:
        raise CommandError(several)
    return found[0]
