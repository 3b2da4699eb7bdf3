"""Nugget banks: nuggets imported from a file, owned by the bank instead of an assessor.

:func:`nugget_bank_import` reads a nugget file (formats in
:mod:`nuggets_app.importers.nuggets`), checks every record against the collection
(known topic, known document, offsets inside its canonical text, span text equal to
the text at the offsets) and saves the bank and its nuggets in one transaction: a
file with any bad line saves nothing. Importing a bank of the same name again
replaces its nuggets. Matching jobs use bank nuggets exactly like assessors' nuggets
(nugget filter ``{"banks": [id]}``, or no filter).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction

from nuggets_app.collection.services.aspects import SOURCE_BANK, aspects_merge
from nuggets_app.collection.services.imports import document_ids
from nuggets_app.importers.errors import (
    ErrorSink,
    ImportFormatError,
    ImportOptionError,
    report,
    unknown_in_collection,
)
from nuggets_app.importers.nuggets import (
    FORMATS,
    NuggetRecord,
    detect_format,
    parse_nuggets,
)
from nuggets_app.models import Collection, Nugget, NuggetBank, Topic

Progress = Callable[[int], None]


@dataclass(frozen=True)
class NuggetBankImport:
    """What one nugget-bank import did."""

    bank: NuggetBank
    format: str
    nuggets: int
    topics: int
    with_source: int
    topics_created: int
    replaced: bool
    seconds: float

    def describe(self) -> str:
        """One line for people."""
        line = (
            f"{self.bank.source_file}: {self.nuggets} nuggets ({self.format}) of "
            f"{self.topics} topics into bank {self.bank.name!r} of collection "
            f"{self.bank.collection.name!r}"
        )
        if self.with_source:
            line += f", {self.with_source} with a source span"
        if self.topics_created:
            line += f"; {self.topics_created} topics created"
        if self.replaced:
            line += "; the bank's earlier nuggets were replaced"
        return f"{line} in {self.seconds:.2f} s"


def _check_records(
    path: str | Path,
    collection: Collection,
    records: list[NuggetRecord],
    topics: dict[str, Topic],
    create_topics: bool,
    sink: ErrorSink,
) -> dict[str, tuple[int, str]]:
    """Report unknown topics and documents and offsets outside the text;
    returns ``docno -> (id, text)`` of the documents the records point to."""
    docnos = {r.docno for r in records if r.docno is not None}
    ids = document_ids(collection, docnos)
    texts = dict(
        collection.documents.filter(pk__in=list(ids.values())).values_list("pk", "text")
    )
    documents = {d: (pk, texts[pk]) for d, pk in ids.items()}
    reported: set[tuple[str, str]] = set()
    for record in records:
        unknown = record.qid not in topics and not create_topics
        if unknown and ("topic", record.qid) not in reported:
            reported.add(("topic", record.qid))
            report(
                sink,
                unknown_in_collection(
                    path, record.line, "topic", record.qid, collection.name
                ),
            )
        if record.docno is None:
            continue
        if record.docno not in documents:
            report(
                sink,
                unknown_in_collection(
                    path, record.line, "document", record.docno, collection.name
                ),
            )
            continue
        text = documents[record.docno][1]
        assert record.start is not None
        assert record.end is not None
        if record.end > len(text):
            report(
                sink,
                ImportFormatError(
                    path,
                    record.line,
                    "offsets outside the document text",
                    expected=f"end <= {len(text)} (length of {record.docno})",
                    got=f"start {record.start}, end {record.end}",
                ),
            )
        elif record.span is not None and text[record.start : record.end] != record.span:
            report(
                sink,
                ImportFormatError(
                    path,
                    record.line,
                    "span differs from the document text at the offsets",
                    expected=repr(text[record.start : record.end][:60]),
                    got=record.span,
                ),
            )
    return documents


def nugget_bank_import(
    *,
    path: str | Path,
    collection: Collection | str,
    name: str | None = None,
    format: str = "auto",
    encoding: str = "utf-8",
    max_errors: int = 1,
    create_topics: bool = False,
    imported_by: Any = None,
    source_name: str | None = None,
    progress: Progress | None = None,
) -> NuggetBankImport:
    """Import the nuggets of ``path`` as the bank ``name`` (default: the file name)
    of ``collection``, all or nothing.

    ``format`` is one of ``auto``, ``jsonl``, ``trec-qa``, ``rag``, ``trec-ts``.
    ``create_topics`` makes a topic of every unknown qid (titled with the file's
    question where it has one; the collection is created too when missing) instead
    of refusing it. ``source_name`` is the file name people see ("imported from
    NAME"; default ``path``), e.g. the original name of an uploaded file.
    Raises :class:`ImportFormatError` (``FILE:LINE: problem``) for bad input and
    ``ValueError`` for an unknown format or collection.
    """
    started = time.perf_counter()
    if format not in FORMATS:
        raise ImportOptionError(
            f"unknown nugget format {format!r}: one of {', '.join(FORMATS)}"
        )
    if isinstance(collection, str):
        found = Collection.objects.filter(name=collection).first()
        if found is None and not create_topics:
            raise ImportOptionError(f"no collection named {collection!r}")
        collection = found or Collection(name=collection)
    fmt = detect_format(path, encoding=encoding) if format == "auto" else format
    sink = ErrorSink(max_errors)
    records = list(parse_nuggets(path, fmt, encoding=encoding, sink=sink))
    topics = (
        {t.qid: t for t in Topic.objects.filter(collection=collection)}
        if collection.pk
        else {}
    )
    documents = (
        _check_records(path, collection, records, topics, create_topics, sink)
        if collection.pk
        else _no_documents(path, records, sink)
    )
    sink.check()
    source = str(source_name or path)
    bank_name = name or Path(source).name
    created_topics = 0
    with transaction.atomic():
        if collection.pk is None:
            collection.save()
        aspects: dict[str, list[str]] = {}
        for record in records:
            listed = aspects.setdefault(record.qid, [])
            if record.aspect and record.aspect not in listed:
                listed.append(record.aspect)
        for record in records:
            if record.qid not in topics:
                topics[record.qid] = Topic.objects.create(
                    collection=collection, qid=record.qid, title=record.topic_text
                )
                created_topics += 1
        _aspects_add(topics, aspects)
        bank, created = NuggetBank.objects.get_or_create(
            collection=collection,
            name=bank_name,
            defaults={"format": fmt, "source_file": source, "imported_by": imported_by},
        )
        if not created:
            bank.nuggets.all().delete()
            bank.format, bank.source_file, bank.imported_by = fmt, source, imported_by
            bank.save(update_fields=["format", "source_file", "imported_by"])
        rows = _nuggets_of(records, documents, topics, bank)
        Nugget.objects.bulk_create(rows, batch_size=2000)
        _times_keep(rows, records)
        if progress is not None:
            progress(len(rows))
    return NuggetBankImport(
        bank=bank,
        format=fmt,
        nuggets=len(rows),
        topics=len({r.qid for r in records}),
        with_source=sum(1 for r in records if r.docno is not None),
        topics_created=created_topics,
        replaced=not created,
        seconds=time.perf_counter() - started,
    )


def _nuggets_of(
    records: list[NuggetRecord],
    documents: dict[str, tuple[int, str]],
    topics: dict[str, Topic],
    bank: NuggetBank,
) -> list[Nugget]:
    """The bank's nuggets, unsaved, one per record: located in its source document
    (offsets and the span text) where the collection has that document."""
    rows = []
    for record in records:
        document_id, text = documents.get(record.docno or "", (None, ""))
        located = document_id is not None
        rows.append(
            Nugget(
                topic=topics[record.qid],
                bank=bank,
                source_id=record.source_id,
                document_id=document_id,
                start=record.start if located else None,
                end=record.end if located else None,
                span_text=text[record.start : record.end] if located else "",
                text=record.text,
                keywords=list(record.keywords),
                grade=record.grade,
                aspect=record.aspect,
                source_assessor=record.assessor,
                source_judgment=record.judgment,
                client_uuid=uuid.uuid4(),
            )
        )
    return rows


def _no_documents(
    path: str | Path, records: list[NuggetRecord], sink: ErrorSink
) -> dict[str, tuple[int, str]]:
    """A collection created by this import has no documents to point into."""
    for record in records:
        if record.docno is not None:
            report(
                sink,
                ImportFormatError(
                    path,
                    record.line,
                    "unknown document (the collection does not exist yet)",
                    got=record.docno,
                ),
            )
    return {}


def _times_keep(rows: list[Nugget], records: list[NuggetRecord]) -> None:
    """Give the nuggets the times their file states (``bulk_create`` stamps now);
    ``bulk_update`` writes the values as set, so ``auto_now`` does not apply."""
    dated = []
    for row, record in zip(rows, records, strict=True):
        if record.created is None and record.changed is None:
            continue
        row.created_at = record.created or row.created_at
        row.updated_at = record.changed or record.created or row.updated_at
        dated.append(row)
    if dated:
        Nugget.objects.bulk_update(dated, ["created_at", "updated_at"], batch_size=2000)


def nugget_bank_delete(*, bank: NuggetBank) -> int:
    """Delete a bank and its nuggets (match results keep their scores and lose the
    link to the nugget); returns the number of nuggets deleted."""
    with transaction.atomic():
        count = bank.nuggets.count()
        bank.delete()
    return count


def _aspects_add(topics: dict[str, Topic], aspects: dict[str, list[str]]) -> None:
    """Give each topic the bank's aspects it lacks (id = text = the bank's label), so
    they are subtopics of the topic like a topics file's; the rows are locked so an
    assessor adding an aspect meanwhile keeps theirs."""
    wanted = {q: names for q, names in aspects.items() if names}
    if not wanted:
        return
    locked = Topic.objects.select_for_update().filter(
        pk__in=[topics[q].pk for q in wanted]
    )
    for topic in locked.order_by("pk"):
        merged = aspects_merge(
            topic.aspects or [],
            ({"id": a, "text": a, "source": SOURCE_BANK} for a in wanted[topic.qid]),
        )
        if merged != topic.aspects:
            topic.aspects = merged
            topic.save(update_fields=["aspects"])
        topics[topic.qid].aspects = merged
