"""Browser uploads: store the files, check them without writing, then import them.

An upload is a :class:`TaskRecord` with its files in ``DATA_DIR/uploads/<task id>/``.
The check pass reads every file to the end with the same parsers the import commands
use and records a summary and every problem as ``FILE:LINE: problem`` (up to
``settings.UPLOAD_MAX_PROBLEMS``); nothing is written. Only a clean check can be
confirmed; the import then calls the same services as the commands
(``nuggets_app.collection.services.imports``) inside one transaction, so it is all or nothing,
also when it is cancelled. A zip of documents is unpacked first, refusing absolute
paths, ``..``, links and more than ``UPLOAD_MAX_UNCOMPRESSED_BYTES`` unpacked.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from nuggets_app.collection.services import imports, nugget_banks
from nuggets_app.collection.services.changed_text import (
    judged_text_changes,
    lost_nuggets,
)
from nuggets_app.collection.services.upload_zips import (
    UploadError,
    too_big,
    zip_extract,
)
from nuggets_app.importers import (
    ErrorSink,
    ImportFormatError,
    parse_collection,
    parse_qrels,
    parse_run,
    parse_topics,
)
from nuggets_app.importers.errors import ImportFormatErrors
from nuggets_app.importers.nuggets import detect_format as detect_nugget_format
from nuggets_app.importers.nuggets import parse_nuggets
from nuggets_app.importers.qrels import detect_kind
from nuggets_app.importers.textio import ReadStats
from nuggets_app.models import Collection, NuggetBank, Qrels, TaskRecord
from nuggets_app.operations.services.task_records import ProgressReporter

UPLOAD_KINDS = (
    TaskRecord.Kind.DOCUMENTS,
    TaskRecord.Kind.TOPICS,
    TaskRecord.Kind.RUNS,
    TaskRecord.Kind.QRELS,
    TaskRecord.Kind.NUGGETS,
)
EXTRACTED = "extracted"
_CHUNK = 1024 * 1024
_REPORT_EVERY = 1000


def upload_dir(task: TaskRecord) -> Path:
    return Path(settings.DATA_DIR) / "uploads" / str(task.pk)


def safe_name(name: str) -> str:
    """The last path component of a client's file name, reduced to safe characters."""
    base = re.split(r"[\\/]", name)[-1]
    base = re.sub(r"[^A-Za-z0-9._+-]", "_", base).lstrip(".")
    return base[:120] or "upload"


def upload_store(*, task: TaskRecord, files: Iterable[Any]) -> TaskRecord:
    """Copy uploaded files (Django ``UploadedFile``) chunk by chunk into the task's folder.

    Refuses (UploadError) a total above ``settings.UPLOAD_MAX_BYTES`` and two files of
    the same name.
    """
    folder = upload_dir(task)
    folder.mkdir(parents=True, exist_ok=True)
    limit = settings.UPLOAD_MAX_BYTES
    total = 0
    stored: list[dict[str, str]] = []
    for upload in files:
        name = safe_name(upload.name)
        if any(entry["name"] == name for entry in stored):
            raise UploadError(f"{name}: uploaded twice")
        target = folder / name
        with target.open("wb") as out:
            for chunk in upload.chunks(_CHUNK):
                total += len(chunk)
                if total > limit:
                    raise UploadError(
                        f"{name}: the upload is larger than the limit of {limit} bytes "
                        "(UPLOAD_MAX_BYTES)"
                    )
                out.write(chunk)
        stored.append({"name": name, "path": str(target)})
    if not stored:
        raise UploadError("no file chosen")
    task.files = stored
    task.save(update_fields=["files"])
    return task


def upload_discard(*, task: TaskRecord) -> None:
    """Remove the task's stored files (after it ends)."""
    shutil.rmtree(upload_dir(task), ignore_errors=True)


# --- the check pass ---------------------------------------------------------------


class _Shown:
    """Maps stored paths back to the names the admin uploaded."""

    def __init__(self, task: TaskRecord) -> None:
        self.folder = str(upload_dir(task))
        zips = [f["name"] for f in task.files if f["name"].lower().endswith(".zip")]
        self.zip_name = zips[0] if zips else EXTRACTED

    def __call__(self, text: str) -> str:
        text = text.replace(f"{self.folder}/{EXTRACTED}", self.zip_name)
        return text.replace(f"{self.folder}/", "")


def _source(task: TaskRecord) -> tuple[str, str]:
    """(path to parse, format) of a documents upload; a zip is unpacked first."""
    entry = task.files[0]
    fmt = task.params.get("fmt", "auto")
    if entry["name"].lower().endswith(".zip") or fmt == "zip":
        dest = upload_dir(task) / EXTRACTED
        if not dest.is_dir():
            zip_extract(
                path=entry["path"],
                dest=dest,
                max_bytes=settings.UPLOAD_MAX_UNCOMPRESSED_BYTES,
                max_files=settings.UPLOAD_MAX_ZIP_FILES,
            )
        return str(dest), "dir"
    return entry["path"], fmt


class _Problems:
    """Every problem of the check, already mapped to the uploaded names."""

    def __init__(self, shown: _Shown) -> None:
        self.shown = shown
        self.lines: list[str] = []
        self.limit = max(1, settings.UPLOAD_MAX_PROBLEMS)
        self.truncated = False

    def sink(self) -> ErrorSink:
        return ErrorSink(self.limit - len(self.lines) + 1)

    def take(self, sink: ErrorSink, fatal: Exception | None = None) -> None:
        """Keep the sink's errors, and ``fatal`` (what stopped the parser) if any."""
        errors = list(sink.errors)
        if isinstance(fatal, ImportFormatErrors):
            errors = list(fatal.errors)
        elif isinstance(fatal, ImportFormatError):
            errors.append(fatal)
        # Problems across lines (unknown qids, duplicates) are found after the
        # parser's own: listed by line, as the file is read.
        errors.sort(key=lambda error: error.line)
        for error in errors:
            if len(self.lines) >= self.limit:
                self.truncated = True
                return
            self.lines.append(self.shown(ImportFormatError.__str__(error)))
        if isinstance(fatal, UploadError):
            self.lines.extend(self.shown(line) for line in fatal.lines)
        elif fatal is not None and not isinstance(fatal, ImportFormatError):
            self.lines.append(self.shown(str(fatal)))

    @property
    def full(self) -> bool:
        return len(self.lines) >= self.limit


_FILE_ERRORS = (ImportFormatError, UploadError, ValueError, OSError)


def _bounded(records: Iterable, stats: ReadStats, name: str) -> Iterator:
    """``records``, stopped with UploadError once the reader has decompressed more than
    ``UPLOAD_MAX_UNCOMPRESSED_BYTES`` (a gzip bomb is refused as a zip bomb is)."""
    limit = settings.UPLOAD_MAX_UNCOMPRESSED_BYTES
    for record in records:
        if stats.bytes > limit:
            raise UploadError(too_big(name, limit))
        yield record
    if stats.bytes > limit:
        raise UploadError(too_big(name, limit))


class _ChangedText:
    """The check's view of judged documents whose text the upload would change: a
    problem each (``refuse``), or each nugget that cannot follow its span text
    (``reanchor``), found with the reads the import uses."""

    def __init__(self, task: TaskRecord, path: str, sink: ErrorSink) -> None:
        self.collection = task.collection
        self.policy = task.params.get("changed_text", "refuse")
        self.path, self.sink = path, sink
        self.batch: dict[str, tuple[int, str]] = {}
        self.changed = 0

    def add(self, record) -> None:
        if self.collection is not None:
            self.batch[record.docno] = (record.line, record.text)
            if len(self.batch) >= imports.lookup_batch():
                self.flush()

    def flush(self) -> None:
        texts = {docno: text for docno, (_, text) in self.batch.items()}
        changed = judged_text_changes(collection=self.collection, texts=texts)
        self.changed += len(changed)
        lines = {docno: line for docno, (line, _) in self.batch.items()}
        self.batch = {}
        if self.policy == "reanchor":
            problems = [
                (
                    lines[docno],
                    f"{nugget} cannot be re-anchored: its span text is "
                    "not in the new text",
                )
                for docno, nugget in lost_nuggets(changed, texts)
            ]
        else:
            problems = [
                (
                    lines[docno],
                    f"document {docno!r} carries judgments or nuggets and "
                    "its text would change (upload again with 'Judged documents whose "
                    "text changes' set to 're-anchor their nuggets', or into a new "
                    "collection)",
                )
                for docno in changed.values()
            ]
        for line, problem in problems:
            self.sink.add(ImportFormatError(self.path, line, problem))


def _check_documents(task, reporter, problems) -> dict:
    path, fmt = _source(task)
    sink = problems.sink()
    stats = ReadStats()
    docnos: list[str] = []
    changed = _ChangedText(task, path, sink)
    try:
        records = parse_collection(path, fmt=fmt, sink=sink, stats=stats)
        for record in _bounded(records, stats, task.files[0]["name"]):
            docnos.append(record.docno)
            changed.add(record)
            if len(docnos) % _REPORT_EVERY == 0:
                reporter.set(len(docnos), 0)
        changed.flush()
        problems.take(sink)
    except _FILE_ERRORS as exc:
        problems.take(sink, exc)
    existing = 0
    if task.collection is not None:
        existing = len(imports.document_ids(task.collection, docnos))
    return {
        "documents": len(docnos),
        "new": len(docnos) - existing,
        "existing (replaced)": existing,
        "judged, text changes": changed.changed,
        "bytes read": stats.bytes,
        "total": len(docnos),
    }


def _check_topics(task, reporter, problems) -> dict:
    entry = task.files[0]
    sink = problems.sink()
    qids: list[str] = []
    try:
        stats = ReadStats()
        records = parse_topics(
            entry["path"], fmt=task.params.get("fmt", "auto"), sink=sink, stats=stats
        )
        for record in _bounded(records, stats, entry["name"]):
            qids.append(record.qid)
        problems.take(sink)
    except _FILE_ERRORS as exc:
        problems.take(sink, exc)
    known = set(task.collection.topics.values_list("qid", flat=True))
    existing = sum(1 for qid in qids if qid in known)
    return {
        "topics": len(qids),
        "new": len(qids) - existing,
        "existing (replaced)": existing,
        "qids": _span(qids),
        "total": len(qids),
    }


def _span(qids: list[str]) -> str:
    if not qids:
        return "-"
    if len(qids) <= 6:
        return " ".join(qids)
    return f"{' '.join(qids[:3])} ... {' '.join(qids[-2:])}"


def _unknown(lines: list, topics: dict, documents: dict) -> tuple[int, int]:
    qids = {line.qid for line in lines if line.qid not in topics}
    docnos = {line.docno for line in lines if line.docno not in documents}
    return len(qids), len(docnos)


def _resolve(
    path: str,
    collection: Collection,
    lines: list,
    sink: ErrorSink,
    skip_unknown_documents: bool = False,
):
    """Unknown topics and documents, reported exactly as the import reports them."""
    return imports._resolve(
        path,
        collection,
        lines,
        sink,
        skip_unknown_documents=skip_unknown_documents,
    )


def _check_runs(task, reporter, problems) -> dict:
    files = []
    tags: dict[str, str] = {}
    existing = set(task.collection.runs.values_list("name", flat=True))
    skip = bool(task.params.get("skip_unknown_documents"))
    total = 0
    for done, entry in enumerate(task.files, start=1):
        if problems.full:
            problems.truncated = True
            break
        sink = problems.sink()
        lines: list = []
        row: dict[str, Any] = {"file": entry["name"]}
        try:
            stats = ReadStats()
            lines = list(
                _bounded(
                    parse_run(entry["path"], sink=sink, stats=stats),
                    stats,
                    entry["name"],
                )
            )
            topics, documents = _resolve(
                entry["path"], task.collection, lines, sink, skip
            )
            row["unknown topics"], row["unknown docnos"] = _unknown(
                lines, topics, documents
            )
            if skip:
                row["lines skipped"] = sum(1 for x in lines if x.docno not in documents)
            if lines and lines[0].tag in tags:
                sink.add(
                    ImportFormatError(
                        entry["path"],
                        lines[0].line,
                        f"run tag already used by {tags[lines[0].tag]} in this upload",
                        expected="a distinct tag per file",
                        got=lines[0].tag,
                    )
                )
            problems.take(sink)
        except _FILE_ERRORS as exc:
            problems.take(sink, exc)
        if lines:
            tag = lines[0].tag
            row.update(tag=tag, lines=len(lines), topics=len({x.qid for x in lines}))
            row["replaces"] = "yes" if tag in existing else "no"
            tags.setdefault(tag, entry["name"])
            total += len(lines)
        files.append(row)
        reporter.set(done, len(task.files))
    return {"files": files, "runs": len(tags), "run lines": total, "total": total}


def _check_qrels(task, reporter, problems) -> dict:
    entry = task.files[0]
    sink = problems.sink()
    kind = task.params.get("kind", "auto")
    lines: list = []
    summary: dict[str, Any] = {}
    try:
        if kind == "auto":
            kind = detect_kind(entry["path"])
        stats = ReadStats()
        lines = list(
            _bounded(
                parse_qrels(entry["path"], kind, sink=sink, stats=stats),
                stats,
                entry["name"],
            )
        )
        topics, documents = _resolve(entry["path"], task.collection, lines, sink)
        summary["unknown topics"], summary["unknown docnos"] = _unknown(
            lines, topics, documents
        )
        problems.take(sink)
    except _FILE_ERRORS as exc:
        problems.take(sink, exc)
    name = task.params.get("name", "")
    level = task.collection.relevance_level
    summary.update(
        {
            "kind": kind,
            "judgments": len(lines),
            "topics": len({line.qid for line in lines}),
            "relevant": sum(1 for line in lines if line.rel >= level),
            "replaces": "yes"
            if Qrels.objects.filter(collection=task.collection, name=name).exists()
            else "no",
            "total": len(lines),
        }
    )
    return summary


def _bank_name(task: TaskRecord) -> str:
    return task.params.get("name") or task.files[0]["name"]


def _check_nuggets(task, reporter, problems) -> dict:
    entry = task.files[0]
    sink = problems.sink()
    fmt = task.params.get("fmt", "auto")
    create = bool(task.params.get("create_topics"))
    records: list = []
    try:
        if fmt == "auto":
            fmt = detect_nugget_format(entry["path"])
        records = list(parse_nuggets(entry["path"], fmt, sink=sink))
        topics = {t.qid: t for t in task.collection.topics.all()}
        nugget_banks._check_records(
            entry["path"], task.collection, records, topics, create, sink
        )
        problems.take(sink)
    except _FILE_ERRORS as exc:
        problems.take(sink, exc)
    known = set(task.collection.topics.values_list("qid", flat=True))
    qids = {record.qid for record in records}
    name = _bank_name(task)
    return {
        "format": fmt,
        "nuggets": len(records),
        "topics": len(qids),
        "new topics" if create else "unknown topics": len(qids - known),
        "with a source span": sum(1 for r in records if r.docno is not None),
        "bank": name,
        "replaces": "yes"
        if NuggetBank.objects.filter(collection=task.collection, name=name).exists()
        else "no",
        "total": len(records),
    }


_CHECKS: dict[str, Callable[..., dict]] = {
    TaskRecord.Kind.DOCUMENTS: _check_documents,
    TaskRecord.Kind.TOPICS: _check_topics,
    TaskRecord.Kind.RUNS: _check_runs,
    TaskRecord.Kind.QRELS: _check_qrels,
    TaskRecord.Kind.NUGGETS: _check_nuggets,
}


def upload_check(*, task: TaskRecord) -> dict:
    """The check pass (the action of ``task_record_execute``): summary and problems are
    stored on the task; nothing else is written."""
    reporter = ProgressReporter(task, "checking")
    problems = _Problems(_Shown(task))
    try:
        summary = _CHECKS[task.kind](task, reporter, problems)
    except UploadError as exc:
        summary = {}
        problems.lines.extend(exc.lines)
    if problems.truncated:
        problems.lines.append(
            f"... stopped after {problems.limit} problems (UPLOAD_MAX_PROBLEMS)"
        )
    task.summary = summary
    task.problems = problems.lines
    task.save(update_fields=["summary", "problems"])
    return {}


# --- the import ---------------------------------------------------------------------


def _import_documents(task, reporter) -> list:
    path, fmt = _source(task)
    return [
        imports.collection_import(
            path=path,
            name=task.collection.name,
            fmt=fmt,
            changed_text=task.params.get("changed_text", "refuse"),
            progress=reporter.add,
        )
    ]


def _import_topics(task, reporter) -> list:
    return [
        imports.topics_import(
            path=task.files[0]["path"],
            collection=task.collection,
            fmt=task.params.get("fmt", "auto"),
            progress=reporter.add,
        )
    ]


def _import_runs(task, reporter) -> list:
    return imports.runs_import(
        paths=[entry["path"] for entry in task.files],
        collection=task.collection,
        progress=reporter.add,
        skip_unknown_documents=bool(task.params.get("skip_unknown_documents")),
        model=task.params.get("model") or None,
    )


def _import_qrels(task, reporter) -> list:
    return [
        imports.qrels_import(
            path=task.files[0]["path"],
            collection=task.collection,
            name=task.params["name"],
            kind=task.params.get("kind", "auto"),
            progress=reporter.add,
        )
    ]


def _import_nuggets(task, reporter) -> list:
    return [
        nugget_banks.nugget_bank_import(
            path=task.files[0]["path"],
            collection=task.collection,
            name=_bank_name(task),
            format=task.params.get("fmt", "auto"),
            create_topics=bool(task.params.get("create_topics")),
            imported_by=task.started_by,
            source_name=task.files[0]["name"],
            progress=reporter.add,
        )
    ]


_IMPORTS: dict[str, Callable[..., list]] = {
    TaskRecord.Kind.DOCUMENTS: _import_documents,
    TaskRecord.Kind.TOPICS: _import_topics,
    TaskRecord.Kind.RUNS: _import_runs,
    TaskRecord.Kind.QRELS: _import_qrels,
    TaskRecord.Kind.NUGGETS: _import_nuggets,
}
IMPORT_ERRORS = (ImportFormatError, UploadError, ValueError, ValidationError, OSError)


def upload_import(*, task: TaskRecord) -> dict:
    """The import (an action for ``task_record_execute``): every file in one
    transaction, through the same services as the import commands."""
    reporter = ProgressReporter(task, "importing", total=task.summary.get("total", 0))
    shown = _Shown(task)
    with transaction.atomic():
        summaries = _IMPORTS[task.kind](task, reporter)
    return {"lines": [shown(summary.describe()) for summary in summaries]}


def upload_error_text(*, task: TaskRecord, exc: Exception) -> str:
    """An import error as the admin should read it: uploaded names, not stored paths."""
    if isinstance(exc, ValidationError):
        return "; ".join(exc.messages)
    return _Shown(task)(str(exc))
