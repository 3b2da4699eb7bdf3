"""A collection's assessment guidelines: Markdown, versioned, rendered sanitized.

Every change is a new ``Guidelines`` row with the next version; the latest is in
force. A judgment (and an adjudicated decision) records the version in force when its
grade was set, so a change of guidelines can be traced in the judgments.
"""

from __future__ import annotations

from typing import Any

import markdown
from django.db import IntegrityError, transaction
from django.db.models import Subquery

from nuggets_app.errors import DomainError
from nuggets_app.lib.html import sanitize_html
from nuggets_app.models import Collection, Guidelines

# Markdown's own extensions only (tables, fenced code, lists that need no blank line).
MARKDOWN_EXTENSIONS = ["tables", "fenced_code", "sane_lists"]
MAX_CHARS = 100_000


class GuidelinesError(DomainError):
    """Guidelines refused; the message says why."""


def guidelines_render(text: str) -> str:
    """The guidelines as HTML safe to show: Markdown rendered, then sanitized with
    the documents' allow-list (raw HTML in the Markdown is sanitized like any)."""
    html = markdown.markdown(text, extensions=MARKDOWN_EXTENSIONS, output_format="html")
    return sanitize_html(html)


def guidelines_current(collection: Collection | int) -> Guidelines | None:
    """The guidelines in force for the collection, or None."""
    pk = collection.pk if isinstance(collection, Collection) else collection
    return Guidelines.objects.filter(collection_id=pk).order_by("-version").first()


def guidelines_current_sql(*, topic_id: int) -> Subquery:
    """The version in force for a topic's collection, as a subquery to store in the
    same statement as a grade."""
    return Subquery(
        Guidelines.objects.filter(collection__topics=topic_id)
        .order_by("-version")
        .values("version")[:1]
    )


def guidelines_save(*, collection: Collection, text: str, author: Any) -> Guidelines:
    """A new version of the collection's guidelines; the same text as the version
    in force changes nothing (that version is returned)."""
    text = text.replace("\r\n", "\n").strip()
    if not text:
        raise GuidelinesError("the guidelines are empty")
    if len(text) > MAX_CHARS:
        raise GuidelinesError(
            f"the guidelines are {len(text):,} characters long, more than {MAX_CHARS:,}"
        )
    current = guidelines_current(collection)
    if current is not None and current.text == text:
        return current
    try:
        with transaction.atomic():
            return Guidelines.objects.create(
                collection=collection,
                version=(current.version if current else 0) + 1,
                text=text,
                author=author,
            )
    except IntegrityError:
        raise GuidelinesError(
            "someone saved another version at the same time: reload and try again"
        ) from None
