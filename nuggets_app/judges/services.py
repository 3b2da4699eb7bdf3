"""Writes of the judges: a judge's labels imported from a file, written out for a
release, and the mark that a result (an audit, a release) read them.

A judge's file is read whole by its parser, checked against the collection (every
qid a topic of it; a docno the collection does not hold is kept by name, with no
document), and written in one transaction: a bad line anywhere leaves the database
as it was. Importing into a judge of the same name replaces its labels, until a
result has read them (an audit, a release: :func:`judge_mark_used`); from then on
the file is refused, and goes to a judge of a new name.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from nuggets_app.collection.services.imports import ImportSummary, document_ids
from nuggets_app.errors import DomainError
from nuggets_app.importers.errors import (
    ErrorSink,
    ImportOptionError,
    report,
    unknown_in_collection,
)
from nuggets_app.importers.fields import qid_key
from nuggets_app.importers.judge_labels import (
    KIND_OF_FORMAT,
    JudgeLabelLine,
    detect_format,
    parse_judge_labels,
)
from nuggets_app.models import Collection, Judge, JudgeLabel
from nuggets_app.operations.bulk import insert_rows

Progress = Callable[[int], None]


class JudgeInUseError(DomainError):
    """The judge's labels were read by a result, so they are kept as they are."""


@dataclass(frozen=True)
class JudgeInfo:
    """What a judge is, kept with its labels (all optional)."""

    model: str = ""
    prompt: str = ""
    date: dt.date | None = None
    notes: str = ""
    threshold: float | None = None


def _collection(collection: Collection | str) -> Collection:
    if isinstance(collection, Collection):
        return collection
    try:
        return Collection.objects.get(name=collection)
    except Collection.DoesNotExist:
        raise ImportOptionError(f"no collection named {collection!r}") from None


def _rows(
    path: str | Path, collection: Collection, lines: list[JudgeLabelLine], sink
) -> list[tuple]:
    """``(topic id, docno, document id or None, grade, score, probabilities)`` per
    line; an unknown qid is reported once, at its first line."""
    topics = dict(collection.topics.values_list("qid", "id"))
    documents = document_ids(collection, (line.docno for line in lines))
    unknown: set[str] = set()
    rows = []
    for line in lines:
        if line.qid not in topics:
            if line.qid not in unknown:
                unknown.add(line.qid)
                report(
                    sink,
                    unknown_in_collection(
                        path, line.line, "topic", line.qid, collection.name
                    ),
                )
            continue
        probs = json.dumps(line.probabilities) if line.probabilities else None
        rows.append(
            (
                topics[line.qid],
                line.docno,
                documents.get(line.docno),
                line.grade,
                line.score,
                probs,
            )
        )
    return rows


def _refuse_used(judge: Judge) -> None:
    if judge.used_at is None:
        return
    when = timezone.localtime(judge.used_at).strftime("%Y-%m-%d %H:%M")
    raise JudgeInUseError(
        f"judge {judge.name!r} was read by {judge.used_by or 'a result'} on {when}: "
        "its labels stay as that result read them; import the file as a judge of "
        f"another name (for example {judge.name}-2)"
    )


def judge_labels_import(
    *,
    path: str | Path,
    collection: Collection | str,
    name: str,
    fmt: str = "auto",
    info: JudgeInfo | None = None,
    encoding: str = "utf-8",
    max_errors: int = 1,
    progress: Progress | None = None,
) -> ImportSummary:
    """Import a judge's labels file as the judge ``name`` of ``collection``, all or
    nothing; the judge's kind follows the file's format (qrels: graded; scores and
    runs: score; JSONL and CSV: probabilities).

    A judge of the same name has its labels and description replaced, unless a
    result read them (:class:`JudgeInUseError`). Raises ``ImportFormatError`` naming
    the file and line of the first bad line (up to ``max_errors`` of them).
    """
    collection = _collection(collection)
    info = info or JudgeInfo()
    started = time.perf_counter()
    if fmt == "auto":
        fmt = detect_format(path, encoding=encoding)
    sink = ErrorSink(max_errors)
    lines = list(parse_judge_labels(path, fmt, encoding=encoding, sink=sink))
    rows = _rows(path, collection, lines, sink)
    sink.check()
    values = {
        "kind": KIND_OF_FORMAT[fmt],
        "model": info.model,
        "prompt": info.prompt,
        "date": info.date,
        "notes": info.notes,
        "threshold": info.threshold,
        "source_file": Path(path).name,
    }
    with transaction.atomic():
        judge = (
            Judge.objects.select_for_update()
            .filter(collection=collection, name=name)
            .first()
        )
        created = judge is None
        if judge is None:
            judge = Judge.objects.create(collection=collection, name=name, **values)
        else:
            _refuse_used(judge)
            judge.labels.all().delete()
            for field, value in values.items():
                setattr(judge, field, value)
            judge.save()
        insert_rows(
            JudgeLabel,
            ("judge", "topic", "docno", "document", "grade", "score", "probabilities"),
            [(judge.pk, *row) for row in rows],
            page_size=max(1, settings.IMPORT_BATCH_SIZE),
        )
    if progress is not None and rows:
        progress(len(rows))
    outside = sum(1 for row in rows if row[2] is None)
    return ImportSummary(
        str(path),
        "labels",
        name,
        len(rows),
        len(rows) if created else 0,
        0 if created else len(rows),
        0,
        time.perf_counter() - started,
        skipped_documents=outside,
    )


def judge_mark_used(*, judge: Judge, by: str) -> None:
    """Record that a result (``by``: an audit, a release) read the judge's labels:
    the first such result is kept, and the labels are read-only from then on."""
    now = timezone.now()
    updated = Judge.objects.filter(pk=judge.pk, used_at__isnull=True).update(
        used_at=now, used_by=by[:200]
    )
    if updated:
        judge.used_at, judge.used_by = now, by[:200]


def _label_line(
    kind: str,
    qid: str,
    docno: str,
    grade: int | None,
    score: float | None,
    probs: dict[str, float] | None,
) -> str:
    if kind == Judge.Kind.GRADED:
        return f"{qid} 0 {docno} {grade}"
    if kind == Judge.Kind.SCORE:
        return f"{qid} Q0 {docno} {score!r}"
    fields = {f"prob_{g}": p for g, p in (probs or {}).items()}
    return json.dumps({"qid": qid, "docno": docno, **fields})


# The file a judge's labels travel in, by its kind: each reads back with
# import_judge_labels (format auto).
RELEASE_SUFFIX: dict[str, str] = {
    Judge.Kind.GRADED: "qrels",
    Judge.Kind.SCORE: "scores",
    Judge.Kind.PROBABILITIES: "jsonl",
}


def _file_stem(name: str, taken: set[str]) -> str:
    """A file name for the judge ``name``: safe characters only, and distinct from
    the names in ``taken`` (two judges whose names differ only in unsafe characters
    get ``-2``, ``-3`` ...)."""
    stem = re.sub(r"[^A-Za-z0-9._+-]", "_", name).lstrip(".")[:120] or "judge"
    unique, n = stem, 1
    while unique in taken:
        n += 1
        unique = f"{stem}-{n}"
    taken.add(unique)
    return unique


def judges_release(*, collection: Collection) -> tuple[dict[str, str], list[dict]]:
    """The collection's judges as a release carries them: ``{"judges/NAME.qrels"
    (or .scores, .jsonl): text}`` and each judge's description for the manifest.
    Each judge is marked read by the release."""
    files: dict[str, str] = {}
    described = []
    taken: set[str] = set()
    for judge in Judge.objects.filter(collection=collection).order_by("name"):
        rows = judge.labels.values_list(
            "topic__qid", "docno", "grade", "score", "probabilities"
        )
        lines = sorted(
            (qid_key(qid), docno, _label_line(judge.kind, qid, docno, g, s, p))
            for qid, docno, g, s, p in rows
        )
        stem = _file_stem(judge.name, taken)
        path = f"judges/{stem}.{RELEASE_SUFFIX[judge.kind]}"
        files[path] = "".join(f"{line}\n" for *_, line in lines)
        described.append(
            {
                "name": judge.name,
                "file": path,
                "kind": judge.kind,
                "model": judge.model,
                "prompt": judge.prompt,
                "date": judge.date.isoformat() if judge.date else None,
                "notes": judge.notes,
                "threshold": judge.threshold,
                "labels": len(lines),
            }
        )
        judge_mark_used(judge=judge, by="a release")
    return files, described
