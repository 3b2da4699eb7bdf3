"""Nugget banks written: the nuggets of a collection, a sample or an assessor.

:func:`nugget_bank_export` writes what the assessors made (and the banks imported)
in a format :mod:`nuggets_app.importers.nuggets` reads back: the project's JSONL keeps
every field (qid, id, text, keywords, grade, aspect, the source span and its offsets,
the assessor, the times, the assessor's grade of the document), so a bank imported by
``import_nuggets`` into another installation and exported again gives the same file;
TREC RAG 2025 and TREC QA keys keep the text and the importance.

A nugget's ``id`` is its id in the file it was imported from, else its id here. The
span is the document's text at the offsets, read in the database (so it is the text
``import_nuggets`` checks against). Lines are sorted by qid (numeric qids as numbers),
docno, offsets and id.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models import Exists, F, OuterRef, Q, Subquery
from django.db.models.functions import Substr

from nuggets_app.errors import DomainError
from nuggets_app.importers.fields import qid_key
from nuggets_app.importers.nugget_writers import WRITE_FORMATS, nuggets_write
from nuggets_app.importers.nuggets import NuggetRecord
from nuggets_app.models import Collection, Judgment, Nugget, Sample, SampleDocument

# Maps an assessor's name to the name written (a release's pseudonyms).
Naming = Callable[[str], str]


class NuggetExportError(DomainError):
    """The nugget bank cannot be written as asked; the message says why."""


@dataclass(frozen=True)
class NuggetBankExport:
    """A written nugget bank: the file's text and what it holds."""

    text: str
    format: str
    nuggets: int
    topics: int

    def describe(self) -> str:
        """One line for people."""
        return f"{self.nuggets} nuggets of {self.topics} topics ({self.format})"


def _sort_key(record: NuggetRecord) -> tuple:
    return (
        qid_key(record.qid),
        record.docno or "",
        record.start if record.start is not None else -1,
        record.end if record.end is not None else -1,
        record.source_id,
    )


def nugget_records(
    *,
    collection: Collection,
    sample: Sample | None = None,
    assessor: str | None = None,
    naming: Naming | None = None,
) -> list[NuggetRecord]:
    """The nuggets of ``collection`` (of ``sample``'s judged pairs, of ``assessor``'s
    hand only), as records in file order."""
    nuggets = Nugget.objects.filter(topic__collection=collection)
    if sample is not None:
        if sample.pool.collection_id != collection.pk:
            raise NuggetExportError(
                f"sample {sample.name!r} is not a sample of {collection.name}"
            )
        nuggets = nuggets.filter(
            Exists(
                SampleDocument.objects.filter(
                    sample=sample,
                    topic_id=OuterRef("topic_id"),
                    document_id=OuterRef("document_id"),
                )
            )
        )
    if assessor is not None:
        user = get_user_model().objects.filter(username=assessor).first()
        if user is None:
            raise NuggetExportError(f"no assessor named {assessor!r}")
        nuggets = nuggets.filter(Q(assessor=user) | Q(source_assessor=assessor))
    judgments = Judgment.objects.filter(
        topic_id=OuterRef("topic_id"),
        document_id=OuterRef("document_id"),
        assessor_id=OuterRef("assessor_id"),
    )
    rows = nuggets.annotate(
        span=Substr("document__text", F("start") + 1, F("end") - F("start")),
        # The label where the assessor also judged the document as a check.
        judged=Subquery(judgments.order_by("quality_check").values("relevance")[:1]),
    ).values_list(
        "pk", "topic__qid", "source_id", "text", "keywords", "grade", "aspect",
        "document__docno", "start", "end", "span", "assessor__username",
        "source_assessor", "created_at", "updated_at", "judged", "source_judgment",
    )  # fmt: skip
    name = naming or (lambda who: who)
    records = []
    for (
        pk, qid, source_id, text, keywords, grade, aspect, docno, start, end, span,
        username, source_assessor, created, changed, judged, source_judgment,
    ) in rows:  # fmt: skip
        who = username or source_assessor
        records.append(
            NuggetRecord(
                line=0,
                qid=qid,
                text=text,
                keywords=tuple(keywords or ()),
                grade=grade,
                aspect=aspect,
                source_id=source_id or str(pk),
                docno=docno,
                start=start,
                end=end,
                span=span if docno is not None else None,
                assessor=name(who) if who else "",
                created=created,
                changed=changed,
                judgment=judged if username else source_judgment,
            )
        )
    return sorted(records, key=_sort_key)


def nugget_bank_export(
    *,
    collection: Collection,
    sample: Sample | None = None,
    assessor: str | None = None,
    format: str = "jsonl",
    naming: Naming | None = None,
) -> NuggetBankExport:
    """The nugget bank of ``collection`` (restricted to ``sample``'s judged pairs or
    to ``assessor``'s nuggets) in ``format``: ``jsonl``, ``rag`` or ``trec-qa``."""
    if format not in WRITE_FORMATS:
        raise NuggetExportError(
            f"nugget bank format must be one of {', '.join(WRITE_FORMATS)}, "
            f"got {format!r}"
        )
    records = nugget_records(
        collection=collection, sample=sample, assessor=assessor, naming=naming
    )
    if not records:
        raise NuggetExportError(
            f"{collection.name} has no nuggets"
            + (f" in sample {sample.name!r}" if sample else "")
            + (f" by {assessor!r}" if assessor else "")
        )
    questions = dict(collection.topics.values_list("qid", "title"))
    return NuggetBankExport(
        text=nuggets_write(records, format, questions=questions),
        format=format,
        nuggets=len(records),
        topics=len({r.qid for r in records}),
    )
