"""Loading files into the database: collections, topics, runs and qrels.

Each file is read by its streaming parser (``nuggets_app.importers``) and written in
batches of ``settings.IMPORT_BATCH_SIZE`` inside one transaction, so a bad line anywhere
in a file leaves the database as it was. Re-importing a file is idempotent: documents and
topics are upserted on their natural keys, and a run or qrels of the same name has its
entries replaced.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.validators import validate_slug
from django.db import connection, transaction

from nuggets_app.collection.services.aspects import SOURCE_TOPICS_FILE, aspects_merge
from nuggets_app.collection.services.changed_text import (
    CHANGED_TEXT,
    TextGuard,
)
from nuggets_app.importers import (
    ErrorSink,
    ImportFormatError,
    parse_collection,
    parse_qrels,
    parse_run,
    parse_topics,
    rank_by_score,
)
from nuggets_app.importers.errors import (
    ImportOptionError,
    report,
    unknown_in_collection,
)
from nuggets_app.importers.qrels import detect_kind
from nuggets_app.importers.textio import ReadStats
from nuggets_app.models import (
    Collection,
    Document,
    Qrels,
    QrelsEntry,
    Run,
    RunEntry,
    Topic,
)
from nuggets_app.operations.bulk import insert_rows

Progress = Callable[[int], None]
"""Called as ``progress(n)`` with the number of records just written."""


@dataclass(frozen=True)
class ImportSummary:
    """What one file import did."""

    path: str
    kind: str
    name: str
    records: int
    created: int
    updated: int
    replaced_chars: int = 0
    seconds: float = 0.0
    reanchored: int = 0
    skipped: int = 0
    skipped_documents: int = 0

    def describe(self) -> str:
        """One line for people: counts, target and time."""
        line = (
            f"{self.path}: {self.records} {self.kind} into {self.name!r} "
            f"({self.created} new, {self.updated} replaced) in {self.seconds:.2f} s"
        )
        if self.replaced_chars:
            line += f"; {self.replaced_chars} undecodable bytes replaced by U+FFFD"
        if self.reanchored:
            line += f"; {self.reanchored} nuggets re-anchored to the new text"
        if self.skipped:
            line += (
                f"; {self.skipped} lines skipped: their {self.skipped_documents} "
                "documents are not in the collection"
            )
        return line


def _batch_size() -> int:
    return max(1, settings.IMPORT_BATCH_SIZE)


def _collection(collection: Collection | str) -> Collection:
    if isinstance(collection, Collection):
        return collection
    try:
        return Collection.objects.get(name=collection)
    except Collection.DoesNotExist:
        raise ImportOptionError(f"no collection named {collection!r}") from None


def _tick(progress: Progress | None, count: int) -> None:
    if progress is not None and count:
        progress(count)


_DOCUMENT_FIELDS = (
    "collection",
    "docno",
    "title",
    "text",
    "html",
    "length_words",
    "length_chars",
)


def _document_row(collection: Collection, record) -> tuple:
    return (
        collection.pk,
        record.docno,
        record.title,
        record.text,
        record.html,
        len(record.text.split()),
        len(record.text),
    )


def _upsert_documents(rows: list[tuple]) -> None:
    insert_rows(
        Document,
        _DOCUMENT_FIELDS,
        rows,
        conflict=("collection", "docno"),
        update=_DOCUMENT_FIELDS[2:],
        page_size=_batch_size(),
    )


def collection_import(
    *,
    path: str | Path,
    name: str,
    fmt: str = "auto",
    encoding: str = "utf-8",
    encoding_errors: str = "strict",
    max_errors: int = 1,
    changed_text: str = "refuse",
    progress: Progress | None = None,
) -> ImportSummary:
    """Import the documents of ``path`` into collection ``name`` (created if missing).

    Documents are upserted by docno, so re-importing the same file changes nothing.
    Raises :class:`ImportFormatError` (the first ``max_errors`` problems) and saves nothing
    when any document is bad; ValueError for a bad name, format or encoding.

    A document that carries judgments or nuggets keeps its text unless
    ``changed_text="reanchor"``: then each of its nuggets moves to the occurrence of its
    span text nearest to where it was. Otherwise, or when a nugget's span text is gone
    from the new text, ValueError names the documents (or nuggets) and nothing is saved:
    no offset ever points at text other than its span.
    """
    validate_slug(name)
    if changed_text not in CHANGED_TEXT:
        raise ImportOptionError(f"changed_text must be one of {CHANGED_TEXT}")
    started = time.perf_counter()
    sink = ErrorSink(max_errors)
    stats = ReadStats()
    records = parse_collection(
        path,
        fmt=fmt,
        encoding=encoding,
        encoding_errors=encoding_errors,
        sink=sink,
        stats=stats,
    )
    guard = TextGuard(changed_text)
    # parse_collection refuses a docno seen before in the file.
    count, created = _load_documents(
        name, records, sink, progress, guard, unique_docnos=True
    )
    return ImportSummary(
        str(path),
        "documents",
        name,
        count,
        created,
        count - created,
        stats.replaced,
        time.perf_counter() - started,
        guard.reanchored,
    )


def ir_datasets_import(
    *, dataset_id: str, name: str, progress: Progress | None = None
) -> ImportSummary:
    """Import the documents of an ir_datasets dataset (needs ir_datasets installed)."""
    from nuggets_app.importers.irds import parse_ir_datasets

    validate_slug(name)
    started = time.perf_counter()
    sink = ErrorSink(1)
    count, created = _load_documents(
        name, parse_ir_datasets(dataset_id), sink, progress, TextGuard("refuse")
    )
    return ImportSummary(
        f"ir_datasets:{dataset_id}",
        "documents",
        name,
        count,
        created,
        count - created,
        0,
        time.perf_counter() - started,
    )


def _load_documents(
    name: str,
    records: Iterable,
    sink: ErrorSink,
    progress: Progress | None,
    guard: TextGuard,
    *,
    unique_docnos: bool = False,
) -> tuple[int, int]:
    """Upsert ``records`` into collection ``name`` in one transaction: (count, created).

    New documents are counted per batch, by probing the batch's docnos before it is
    written, not by counting the collection before and after: those counts read every
    document of the collection, which cost more than importing a small file into a
    large collection, and a few seconds after a million documents. A collection that
    was empty needs no probes when the records' docnos are ``unique_docnos``.
    """
    count = 0
    existing = 0
    with transaction.atomic():
        collection, made = Collection.objects.get_or_create(name=name)
        probe = not unique_docnos or (not made and collection.documents.exists())
        batch: list[tuple] = []
        for record in records:
            batch.append(_document_row(collection, record))
            if len(batch) >= _batch_size():
                existing += _write_batch(collection, batch, guard, probe)
                count += len(batch)
                _tick(progress, len(batch))
                batch = []
        if batch:
            existing += _write_batch(collection, batch, guard, probe)
            count += len(batch)
            _tick(progress, len(batch))
        sink.check()
        guard.finish(collection.name)
    return count, count - existing


def _write_batch(
    collection: Collection, batch: list[tuple], guard: TextGuard, probe: bool
) -> int:
    """Write one batch of document rows; returns how many of them already existed
    (0 without ``probe``)."""
    guard.check(collection, batch)
    existing = 0
    if probe:
        # Distinct docnos: a batch repeating one (ir_datasets) counts it once.
        docnos = {row[1] for row in batch}
        existing = Document.objects.filter(
            collection=collection, docno__in=list(docnos)
        ).count()
        existing += len(batch) - len(docnos)
    _upsert_documents(batch)
    return existing


def _keep_added_aspects(collection: Collection, rows: list[Topic]) -> None:
    """A re-imported topic keeps the aspects assessors or nugget banks added to it
    (those not from a topics file), after the file's; the rows are locked first."""
    existing = dict(
        Topic.objects.select_for_update()
        .filter(collection=collection, qid__in=[t.qid for t in rows])
        .order_by("pk")
        .values_list("qid", "aspects")
    )
    for topic in rows:
        added = [
            a
            for a in existing.get(topic.qid) or []
            if a.get("source", SOURCE_TOPICS_FILE) != SOURCE_TOPICS_FILE
        ]
        topic.aspects = aspects_merge(topic.aspects, added)


def topics_import(
    *,
    path: str | Path,
    collection: Collection | str,
    fmt: str = "auto",
    encoding: str = "utf-8",
    max_errors: int = 1,
    progress: Progress | None = None,
) -> ImportSummary:
    """Import (upsert by qid) the topics of ``path`` into ``collection``."""
    collection = _collection(collection)
    started = time.perf_counter()
    sink = ErrorSink(max_errors)
    records = list(parse_topics(path, fmt=fmt, encoding=encoding, sink=sink))
    sink.check()
    rows = [
        Topic(
            collection=collection,
            qid=r.qid,
            title=r.title,
            description=r.description,
            narrative=r.narrative,
            aspects=[{**a, "source": SOURCE_TOPICS_FILE} for a in r.aspects],
        )
        for r in records
    ]
    with transaction.atomic():
        _keep_added_aspects(collection, rows)
        before = collection.topics.count()
        Topic.objects.bulk_create(
            rows,
            batch_size=_batch_size(),
            update_conflicts=True,
            unique_fields=["collection", "qid"],
            update_fields=["title", "description", "narrative", "aspects"],
        )
        created = collection.topics.count() - before
    _tick(progress, len(rows))
    return ImportSummary(
        str(path),
        "topics",
        collection.name,
        len(rows),
        created,
        len(rows) - created,
        0,
        time.perf_counter() - started,
    )


def lookup_batch() -> int:
    """How many keys one lookup query takes."""
    # SQLite limits bound parameters per statement (999 in older builds).
    return 900 if connection.vendor == "sqlite" else 10_000


def document_ids(collection: Collection, docnos: Iterable[str]) -> dict[str, int]:
    """docno -> primary key for those of ``docnos`` that are in ``collection``."""
    wanted = sorted(set(docnos))
    found: dict[str, int] = {}
    step = lookup_batch()
    for start in range(0, len(wanted), step):
        chunk = wanted[start : start + step]
        found.update(
            Document.objects.filter(collection=collection, docno__in=chunk).values_list(
                "docno", "id"
            )
        )
    return found


def _resolve(
    path: str | Path,
    collection: Collection,
    lines: Sequence,
    sink: ErrorSink,
    *,
    skip_unknown_documents: bool = False,
) -> tuple[dict[str, int], dict[str, int]]:
    """Topic and document ids for the lines; each unknown qid/docno reported once
    (unknown docnos not at all with ``skip_unknown_documents``)."""
    topics = dict(collection.topics.values_list("qid", "id"))
    documents = document_ids(collection, (line.docno for line in lines))
    unknown: set[tuple[str, str]] = set()
    for line in lines:
        for kind, key, known in (
            ("topic", line.qid, topics),
            ("document", line.docno, documents),
        ):
            if kind == "document" and skip_unknown_documents:
                continue
            if key not in known and (kind, key) not in unknown:
                unknown.add((kind, key))
                report(
                    sink,
                    unknown_in_collection(path, line.line, kind, key, collection.name),
                )
    return topics, documents


def _run_import_file(
    path: str | Path,
    collection: Collection,
    encoding: str,
    max_errors: int,
    progress: Progress | None,
    claimed: dict[str, str],
    skip_unknown_documents: bool,
) -> ImportSummary:
    started = time.perf_counter()
    sink = ErrorSink(max_errors)
    lines = list(parse_run(path, encoding=encoding, sink=sink))
    topics, documents = _resolve(
        path, collection, lines, sink, skip_unknown_documents=skip_unknown_documents
    )
    sink.check()
    tag = lines[0].tag
    if tag in claimed:
        raise ImportFormatError(
            path,
            lines[0].line,
            f"run tag already used by {claimed[tag]} in this import",
            expected="a distinct tag per file",
            got=tag,
        )
    claimed[tag] = str(path)
    with transaction.atomic():
        run, created = Run.objects.get_or_create(
            collection=collection, name=tag, defaults={"source_file": str(path)}
        )
        if not created:
            run.entries.all().delete()
            run.source_file = str(path)
            run.save(update_fields=["source_file", "updated_at"])
        # Ranked with the skipped lines, so a kept document keeps its rank.
        rows = [
            (run.pk, topics[line.qid], documents[line.docno], line.rank, line.score)
            for line in rank_by_score(lines)
            if line.docno in documents
        ]
        step = _batch_size()
        for start in range(0, len(rows), step):
            insert_rows(
                RunEntry,
                ("run", "topic", "document", "rank", "score"),
                rows[start : start + step],
                page_size=step,
            )
            _tick(progress, len(rows[start : start + step]))
    return ImportSummary(
        str(path),
        "run entries",
        tag,
        len(rows),
        int(created),
        int(not created),
        0,
        time.perf_counter() - started,
        skipped=len(lines) - len(rows),
        skipped_documents=len({x.docno for x in lines if x.docno not in documents}),
    )


def runs_import(
    *,
    paths: Sequence[str | Path],
    collection: Collection | str,
    encoding: str = "utf-8",
    max_errors: int = 1,
    progress: Progress | None = None,
    skip_unknown_documents: bool = False,
    model: str | None = None,
) -> list[ImportSummary]:
    """Import TREC run files, one transaction per file; the run name is the tag column.
    ``model``: the model the runs used (kept with each run; None leaves it as it was).

    Ranks are recomputed in trec_eval's order (score descending, docno descending).
    A run already imported under the same tag is replaced. Unknown topics or documents
    are errors naming file and line; files before a bad one stay imported. With
    ``skip_unknown_documents`` the lines of documents not in the collection are
    skipped instead (counted in the summary); the others keep their ranks.
    """
    collection = _collection(collection)
    claimed: dict[str, str] = {}
    summaries = [
        _run_import_file(
            path,
            collection,
            encoding,
            max_errors,
            progress,
            claimed,
            skip_unknown_documents,
        )
        for path in paths
    ]
    if model is not None:
        Run.objects.filter(collection=collection, name__in=list(claimed)).update(
            model=model.strip()[:200]
        )
    return summaries


def qrels_import(
    *,
    path: str | Path,
    collection: Collection | str,
    name: str,
    kind: str = "auto",
    encoding: str = "utf-8",
    max_errors: int = 1,
    progress: Progress | None = None,
) -> ImportSummary:
    """Import a qrels, prels, probabilistic or subtopic qrels file as the qrels
    ``name`` of ``collection`` (subtopic qrels only with ``kind="subtopics"``).

    A qrels of the same name has its entries replaced, all or nothing. Unknown topics or documents are
    errors naming file and line.
    """
    collection = _collection(collection)
    started = time.perf_counter()
    if kind == "auto":
        kind = detect_kind(path, encoding=encoding)
    sink = ErrorSink(max_errors)
    lines = list(parse_qrels(path, kind, encoding=encoding, sink=sink))
    topics, documents = _resolve(path, collection, lines, sink)
    sink.check()
    with transaction.atomic():
        qrels, created = Qrels.objects.get_or_create(
            collection=collection,
            name=name,
            defaults={"kind": kind, "source_file": str(path)},
        )
        if not created:
            qrels.entries.all().delete()
            qrels.kind = kind
            qrels.source_file = str(path)
            qrels.save(update_fields=["kind", "source_file", "updated_at"])
        rows = [
            (
                qrels.pk,
                topics[line.qid],
                documents[line.docno],
                line.rel,
                line.method,
                line.inclusion_prob,
                line.probability,
                line.subtopic or "",
            )
            for line in lines
        ]
        insert_rows(
            QrelsEntry,
            (
                "qrels",
                "topic",
                "document",
                "relevance",
                "method",
                "inclusion_prob",
                "probability",
                "subtopic",
            ),
            rows,
            page_size=_batch_size(),
        )
    _tick(progress, len(rows))
    return ImportSummary(
        str(path),
        "judgments",
        name,
        len(rows),
        len(rows) if created else 0,
        0 if created else len(rows),
        0,
        time.perf_counter() - started,
    )
