"""Adjudicated decisions: staff resolve a document the assessors disagree on.

The decision is an ``Adjudication`` row, one per (topic, document), beside the
assessors' judgments and never written over them; each change is kept in the history
(``WorkChange`` of kind ``adjudication``, the adjudicator as owner and actor). As for
judgments, a save carrying the version it was based on is refused when another
adjudicator changed the decision since.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from nuggets_app.judging.services.changes import change_record
from nuggets_app.judging.services.guidelines import guidelines_current
from nuggets_app.judging.services.judgments import JudgingError, grade_check
from nuggets_app.models import Adjudication, Document, Judgment, Topic, WorkChange


class AdjudicationConflict(JudgingError):
    """The decision changed since the adjudicator read it."""

    status = 409


def _snapshot(row: Adjudication) -> dict:
    return {"relevance": row.relevance, "version": row.version, "note": row.note}


def adjudication_record(
    *,
    adjudicator: Any,
    topic: Topic,
    document: Document,
    relevance: int,
    version: int | None = None,
    note: str = "",
) -> Adjudication:
    """Set the adjudicated grade of (topic, document). ``version``: the version the
    adjudicator saw (0: none yet); another one raises ``AdjudicationConflict``.
    Only a document at least one assessor judged can be adjudicated; the same grade
    and note again write nothing."""
    if not adjudicator.is_staff:
        raise JudgingError("only staff adjudicate")
    if relevance is None:
        raise JudgingError("an adjudicated decision needs a grade", field="relevance")
    grade_check(topic=topic, value=relevance, field="relevance")
    judged = Judgment.objects.filter(
        topic=topic, document=document, relevance__isnull=False, quality_check=False
    ).exists()
    if not judged:
        raise JudgingError(
            f"nobody judged document {document.docno} for topic {topic.qid}: "
            "there is nothing to adjudicate"
        )
    guidelines = guidelines_current(topic.collection_id)
    with transaction.atomic():
        row = (
            Adjudication.objects.select_for_update()
            .filter(topic=topic, document=document)
            .first()
        )
        seen = row.version if row is not None else 0
        if version is not None and version != seen:
            raise AdjudicationConflict(
                f"the decision is at version {seen}, not {version}: "
                "another adjudicator changed it",
                field="version",
            )
        if row is not None and row.relevance == relevance and row.note == note[:200]:
            return row
        before = _snapshot(row) if row is not None else None
        if row is None:
            row = Adjudication(topic=topic, document=document, version=0)
        row.adjudicator = adjudicator
        row.relevance = relevance
        row.note = note[:200]
        row.version += 1
        row.guidelines_version = guidelines.version if guidelines else None
        row.updated_at = timezone.now()
        row.save()
        change_record(
            kind=WorkChange.ADJUDICATION,
            object_id=row.pk,
            topic_id=topic.pk,
            document_id=document.pk,
            owner_id=adjudicator.pk,
            actor=adjudicator,
            before=before,
            after=_snapshot(row),
            note=note,
        )
    return row
