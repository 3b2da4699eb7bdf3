"""Creating, editing and deleting nuggets.

Offsets index the document's canonical text (``Document.text``) in code points:
``0 <= start < end <= len(text)`` and ``span_text == text[start:end]``. Creation is
idempotent on ``client_uuid`` (a retried POST returns the first row); edits carry the
``version`` the client last saw, and a stale version is a conflict, never a silent
overwrite.

A span is trimmed of whitespace at both ends before it is stored. What remains must be
information, not a stray click: at least ``MIN_SPAN_CHARS`` characters and
``MIN_SPAN_WORDS`` word tokens (runs of letters or digits, as the matcher tokenizes).
An assessor cannot make the same span of a document a nugget twice.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from nuggets_app.judging.services.changes import change_record, nugget_snapshot
from nuggets_app.judging.services.judgments import (
    JudgingError,
    NotAssigned,
    Slot,
    assignment_check,
    grade_check,
)
from nuggets_app.learning.embeddings import semantic_available
from nuggets_app.models import Document, Nugget, Topic, WorkChange
from nuggets_app.operations import queue

MAX_TEXT_CHARS = 5000
MAX_KEYWORDS = 20
MAX_KEYWORD_CHARS = 100
MIN_SPAN_CHARS = 3
MIN_SPAN_WORDS = 2
_WORD_RE = re.compile(r"[^\W_]+")


class NuggetConflict(JudgingError):
    """The nugget changed since the client read it; ``current`` is the server copy."""

    status = 409

    def __init__(self, message: str, *, current: Nugget) -> None:
        super().__init__(message, field="version")
        self.current = current


class SpanMismatch(JudgingError):
    """The client's span text differs from the canonical text at its offsets."""

    status = 422


class DuplicateNugget(JudgingError):
    """The assessor already made a nugget of exactly this span of the document."""

    status = 409


def _clean_text(text: str) -> str:
    text = text.strip()
    if not text:
        raise JudgingError("text is empty", field="text")
    if len(text) > MAX_TEXT_CHARS:
        raise JudgingError(
            f"text is longer than {MAX_TEXT_CHARS} characters", field="text"
        )
    return text


def _clean_keywords(keywords: list[str]) -> list[str]:
    cleaned: list[str] = []
    for word in keywords:
        word = word.strip()
        if len(word) > MAX_KEYWORD_CHARS:
            raise JudgingError(
                f"keyword {word[:20]!r}... is longer than {MAX_KEYWORD_CHARS} characters",
                field="keywords",
            )
        if word and word not in cleaned:
            cleaned.append(word)
    if len(cleaned) > MAX_KEYWORDS:
        raise JudgingError(f"more than {MAX_KEYWORDS} keywords", field="keywords")
    return cleaned


def _clean_aspect(topic: Topic, aspect: str) -> str:
    aspect = aspect.strip()
    allowed = [str(a.get("id", "")) for a in topic.aspects or []]
    if aspect and aspect not in allowed:
        raise JudgingError(f"aspect {aspect!r} is not one of {allowed}", field="aspect")
    return aspect


def nugget_span_check(
    *, document: Document, start: int, end: int, span_text: str | None
) -> tuple[int, int]:
    """The span ``[start, end)`` trimmed of whitespace at both ends. ``JudgingError``
    when it is outside the text or too short to be information, ``SpanMismatch`` (422)
    when ``span_text`` differs from the text."""
    if not 0 <= start < end <= len(document.text):
        raise JudgingError(
            f"span [{start}, {end}) is not inside the text (0..{len(document.text)})",
            field="start",
        )
    actual = document.text[start:end]
    if span_text is not None and span_text != actual:
        raise SpanMismatch(
            f"span text {span_text[:40]!r} differs from the document at [{start}, {end})",
            field="span_text",
        )
    trimmed = actual.strip()
    if len(trimmed) < MIN_SPAN_CHARS or len(_WORD_RE.findall(trimmed)) < MIN_SPAN_WORDS:
        raise JudgingError(
            f"selection {trimmed[:40]!r} is too short for a nugget: select at least "
            f"{MIN_SPAN_WORDS} words",
            field="span_text",
        )
    start += len(actual) - len(actual.lstrip())
    return start, start + len(trimmed)


def _earlier(
    *,
    client_uuid: uuid.UUID,
    assessor: Any,
    topic: Topic,
    document: Document,
    start: int,
    end: int,
) -> tuple[Nugget | None, Nugget | None]:
    """The nugget already saved with ``client_uuid`` (a replayed request), and the
    assessor's nugget of the same span, if any: one query for both checks."""
    same_span = Q(
        assessor=assessor, topic=topic, document=document, start=start, end=end
    )
    replayed = duplicate = None
    # Not sliced: a concurrent double create can leave two rows of one span, and the
    # replayed row must still be found beside them.
    for row in Nugget.objects.filter(Q(client_uuid=client_uuid) | same_span):
        if row.client_uuid == client_uuid:
            replayed = row
        else:
            duplicate = row
    return replayed, duplicate


def nugget_save(
    *,
    assessor: Any,
    topic: Topic,
    document: Document,
    start: int,
    end: int,
    text: str,
    keywords: list[str],
    grade: int | None,
    aspect: str,
    client_uuid: uuid.UUID,
    span_text: str | None = None,
    slot: Slot | None = None,
) -> tuple[Nugget, bool]:
    """Create a nugget from the span ``[start, end)``; returns ``(nugget, created)``.

    A second call with the same ``client_uuid`` returns the existing nugget unchanged
    (``created`` False). ``span_text``, when given, must equal the canonical text at
    the offsets (``SpanMismatch`` otherwise: the client's offsets drifted). The
    stored span is trimmed of whitespace; a span too short to be information or one
    the assessor already made a nugget of is refused (``DuplicateNugget``). ``slot``
    is the judging view's proof of the assignment (``assignment_check``).
    """
    start, end = nugget_span_check(
        document=document, start=start, end=end, span_text=span_text
    )
    replayed, duplicate = _earlier(
        client_uuid=client_uuid,
        assessor=assessor,
        topic=topic,
        document=document,
        start=start,
        end=end,
    )
    if replayed is not None:
        return _replayed(replayed, assessor), False
    fields = {
        "text": _clean_text(text),
        "keywords": _clean_keywords(keywords),
        "aspect": _clean_aspect(topic, aspect),
        "grade": grade,
    }
    grade_check(topic=topic, value=grade, field="grade")
    assignment_check(assessor=assessor, topic=topic, document=document, slot=slot)
    if duplicate is not None:
        raise DuplicateNugget(
            f"you already made a nugget of this span (nugget {duplicate.pk})",
            field="span_text",
        )
    try:
        with transaction.atomic():
            nugget = Nugget.objects.create(
                topic=topic,
                document=document,
                assessor=assessor,
                start=start,
                end=end,
                span_text=document.text[start:end],
                client_uuid=client_uuid,
                **fields,
            )
            nugget_change_record(
                nugget, actor=assessor, before=None, after=nugget_snapshot(nugget)
            )
    except IntegrityError:
        # The same client_uuid won a race in another request: that row is the answer.
        existing = Nugget.objects.filter(client_uuid=client_uuid).first()
        if existing is None:
            raise
        return _replayed(existing, assessor), False
    nugget_embed_later(nugget.pk)
    return nugget, True


def nugget_change_record(
    nugget: Nugget,
    *,
    actor: Any,
    before: dict | None,
    after: dict | None,
    undo_of: WorkChange | None = None,
) -> WorkChange:
    """Keep a change of an assessor's nugget in the history (inside its transaction);
    ``after`` is None for a deleted nugget, ``before`` None for a new one."""
    return change_record(
        kind=WorkChange.NUGGET,
        object_id=nugget.pk,
        topic_id=nugget.topic_id,
        document_id=nugget.document_id,
        owner_id=nugget.assessor_id,
        actor=actor,
        before=before,
        after=after,
        undo_of=undo_of,
    )


def nugget_embed_later(nugget_id: int) -> None:
    """With the semantic extra, a worker embeds the saved text after the commit (the
    process's background thread without a broker: never inside the request). Robust:
    a broker error is logged, never the assessor's (the nugget is saved, and is
    embedded the first time something needs its vector)."""
    if semantic_available():
        transaction.on_commit(
            lambda: queue.task_enqueue_background(queue.EMBED_NUGGETS, [nugget_id]),
            robust=True,
        )


def _replayed(existing: Nugget, assessor: Any) -> Nugget:
    if existing.assessor_id != assessor.pk:
        # Never reveal another assessor's row through a guessed uuid.
        raise NotAssigned("client_uuid belongs to another nugget")
    return existing


def nugget_update(
    *,
    assessor: Any,
    nugget: Nugget,
    version: int,
    text: str,
    keywords: list[str],
    grade: int | None,
    aspect: str,
) -> Nugget:
    """Replace the editable fields of the assessor's own nugget, at ``version``.

    Raises ``NuggetConflict`` (carrying the server copy) when ``version`` is stale.
    The offsets and span text never change: they are the evidence.
    """
    if nugget.assessor_id != assessor.pk:
        raise NotAssigned("not your nugget")
    fields = {
        "text": _clean_text(text),
        "keywords": _clean_keywords(keywords),
        "aspect": _clean_aspect(nugget.topic, aspect),
        "grade": grade,
    }
    grade_check(topic=nugget.topic, value=grade, field="grade")
    now = timezone.now()
    before = nugget_snapshot(nugget) or {}
    with transaction.atomic():
        changed = Nugget.objects.filter(pk=nugget.pk, version=version).update(
            **fields, version=F("version") + 1, updated_at=now
        )
        if changed:
            # The row was exactly the nugget read at ``version``: no need to read it.
            before["version"] = version
            after = {**before, **fields, "version": version + 1}
            nugget_change_record(nugget, actor=assessor, before=before, after=after)
    if not changed:
        current = Nugget.objects.get(pk=nugget.pk)
        raise NuggetConflict(
            f"nugget {nugget.pk} is at version {current.version}, not {version}",
            current=current,
        )
    # The row is now exactly the nugget read plus these changes (the version check
    # made the update conditional on nobody else's): no need to read it back.
    for name, value in fields.items():
        setattr(nugget, name, value)
    nugget.version, nugget.updated_at = version + 1, now
    nugget.assessor = assessor  # the owner, checked above: no query for provenance
    nugget_embed_later(nugget.pk)
    return nugget


def nugget_delete(*, assessor: Any, nugget: Nugget, version: int | None = None) -> None:
    """Delete the assessor's own nugget (at ``version`` when given)."""
    if nugget.assessor_id != assessor.pk:
        raise NotAssigned("not your nugget")
    with transaction.atomic():
        qs = Nugget.objects.filter(pk=nugget.pk)
        if version is not None:
            qs = qs.filter(version=version)
        current = qs.select_for_update().first()
        deleted, _ = qs.delete()
        if deleted and current is not None:
            before = nugget_snapshot(current)
            nugget_change_record(current, actor=assessor, before=before, after=None)
        if not deleted:
            current = Nugget.objects.filter(pk=nugget.pk).first()
            if current is not None:
                raise NuggetConflict(
                    f"nugget {nugget.pk} is at version {current.version}, not {version}",
                    current=current,
                )
