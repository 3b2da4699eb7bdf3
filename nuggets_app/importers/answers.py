"""Generated answers to evaluate against nuggets: JSONL, one answer per line,
``{"run_id", "qid", "text", "citations"?}``; ``citations`` is a list of docnos (or of
objects with a ``docno``), kept for the record. A run answers a topic once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from .documents import json_object
from .errors import ErrorSink, ImportFormatError, report
from .fields import MAX_QID
from .records import check_storable
from .textio import iter_lines

MAX_ANSWER_CHARS = 100_000
MAX_RUN_ID = 100


class AnswerRecord(NamedTuple):
    line: int
    run_id: str
    qid: str
    text: str
    citations: tuple[str, ...] = ()


def _field(path: str | Path, line: int, obj: dict, key: str, limit: int) -> str:
    value = obj.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and key == "qid":
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise ImportFormatError(
            path, line, f"field {key!r} is missing or not a non-empty string", got=value
        )
    value = check_storable(path, line, key, value.strip())
    if len(value) > limit:
        raise ImportFormatError(
            path, line, f"field {key!r} longer than {limit} characters", got=value
        )
    return value


def _citations(path: str | Path, line: int, value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ImportFormatError(
            path, line, "field 'citations' is not a list", got=value
        )
    out = []
    for item in value:
        docno = item.get("docno") if isinstance(item, dict) else item
        if not isinstance(docno, str | int) or isinstance(docno, bool):
            raise ImportFormatError(
                path, line, "a citation is not a docno", expected="a string", got=item
            )
        out.append(str(docno))
    return tuple(out)


def parse_answers(
    path: str | Path, *, encoding: str = "utf-8", sink: ErrorSink | None = None
) -> Iterator[AnswerRecord]:
    """Yield the answers of ``path``; a run answering a topic twice is an error
    naming both lines."""
    seen: dict[tuple[str, str], int] = {}
    count = 0
    for line, text in iter_lines(path, encoding=encoding):
        if not text.strip():
            continue
        try:
            obj = json_object(path, line, text)
            record = AnswerRecord(
                line=line,
                run_id=_field(path, line, obj, "run_id", MAX_RUN_ID),
                qid=_field(path, line, obj, "qid", MAX_QID),
                text=_field(path, line, obj, "text", MAX_ANSWER_CHARS),
                citations=_citations(path, line, obj.get("citations")),
            )
            key = (record.run_id, record.qid)
            if key in seen:
                raise ImportFormatError(
                    path,
                    line,
                    f"run {record.run_id!r} answers topic {record.qid} twice "
                    f"(first on line {seen[key]})",
                )
            seen[key] = line
        except ImportFormatError as error:
            report(sink, error)
            continue
        count += 1
        yield record
    if count == 0 and (sink is None or not sink.errors):
        raise ImportFormatError(path, 1, "empty file: no answers")
