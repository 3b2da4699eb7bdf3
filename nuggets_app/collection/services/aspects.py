"""A topic's aspects (subtopics), an attribute of the topic: added by assessors while
judging, merged from topics files and nugget banks when they are imported.

``Topic.aspects`` is a list of ``{"id", "text", "source"[, "type", "created_by",
"created_at"]}``; ``source`` says where an aspect came from: ``"topics file"`` (TREC
Web subtopics, a JSONL topic's aspects), ``"bank"`` (a nugget bank's aspects, e.g. RAG
2025 sub-narratives) or ``"assessor"`` (added on the judging page, with the username in
``created_by``). Aspects without ``source`` predate the field. Every write locks the
topic row, so two assessors adding at the same time both keep theirs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from nuggets_app.errors import DomainError
from nuggets_app.models import Topic

MAX_ASPECT_LABEL_CHARS = 120
SOURCE_ASSESSOR = "assessor"
SOURCE_TOPICS_FILE = "topics file"
SOURCE_BANK = "bank"


class AspectError(DomainError):
    """An aspect the server refuses; ``status`` is the HTTP answer, ``field`` the form
    field at fault (the judging page shows the message beside it)."""

    status = 400

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.message = message


class DuplicateAspect(AspectError):
    """The topic already has an aspect with this label; ``existing`` is that aspect."""

    status = 409

    def __init__(self, message: str, *, existing: dict[str, Any]) -> None:
        super().__init__(message, field="aspect_text")
        self.existing = existing


def _clean_label(text: str) -> str:
    label = " ".join(text.split())
    if not label:
        raise AspectError("the new aspect's label is empty", field="aspect_text")
    if len(label) > MAX_ASPECT_LABEL_CHARS:
        raise AspectError(
            f"the new aspect's label is longer than {MAX_ASPECT_LABEL_CHARS} "
            f"characters ({len(label)}): keep it short",
            field="aspect_text",
        )
    return label


MAX_ASPECT_ID_CHARS = 40


def _slug_id(label: str, aspects: list[dict[str, Any]]) -> str:
    """A slug of the label, free in the topic (``wind-tunnel-tests``, then
    ``wind-tunnel-tests-2``): never a bare number, which reads as a grade or a qid."""
    base = slugify(label, allow_unicode=True)[:MAX_ASPECT_ID_CHARS].strip("-")
    if not base or base.isdigit():
        base = f"aspect-{base}" if base else "aspect"
    taken = {str(a.get("id", "")).casefold() for a in aspects}
    slug, n = base, 1
    while slug.casefold() in taken:
        n += 1
        slug = f"{base}-{n}"
    return slug


def aspect_create(*, user: Any, topic: Topic, text: str) -> dict[str, Any]:
    """Add an aspect labelled ``text`` to ``topic`` and return it.

    The id is a slug of the label, unique in the topic (see ``_slug_id``). ``AspectError`` for an empty or
    over-long label, ``DuplicateAspect`` (409) when the label equals an existing
    aspect's label or id, ignoring case and runs of whitespace."""
    label = _clean_label(text)
    with transaction.atomic():
        locked = Topic.objects.select_for_update().get(pk=topic.pk)
        aspects = list(locked.aspects or [])
        wanted = label.casefold()
        for aspect in aspects:
            names = (str(aspect.get("id", "")), str(aspect.get("text", "")))
            if wanted in (" ".join(n.split()).casefold() for n in names):
                raise DuplicateAspect(
                    f"topic {locked.qid} already has the aspect {aspect['id']!r} "
                    f"({aspect.get('text', '')!r})",
                    existing=aspect,
                )
        created = {
            "id": _slug_id(label, aspects),
            "text": label,
            "source": SOURCE_ASSESSOR,
            "created_by": user.get_username(),
            "created_at": timezone.now().isoformat(timespec="seconds"),
        }
        locked.aspects = [*aspects, created]
        locked.save(update_fields=["aspects"])
    topic.aspects = locked.aspects
    return created


def aspects_merge(
    existing: Iterable[dict[str, Any]], added: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``existing`` followed by the aspects of ``added`` whose id it lacks."""
    merged = list(existing)
    ids = {str(a.get("id", "")) for a in merged}
    for aspect in added:
        if str(aspect.get("id", "")) not in ids:
            merged.append(aspect)
            ids.add(str(aspect.get("id", "")))
    return merged
