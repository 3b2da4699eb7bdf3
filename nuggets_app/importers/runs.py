"""TREC run files: ``qid Q0 docno rank score tag``, one retrieved document per line.

Columns are separated by ASCII spaces or tabs (CRLF accepted); blank and ``#`` lines are
skipped as trec_eval skips them. The score must be a finite ASCII number, the rank a
non-negative integer, ``(qid, docno)`` unique and the tag the same on every line.
trec_eval ignores the rank column and orders by score: :func:`rank_by_score` does the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from .errors import ErrorSink, ImportFormatError
from .fields import (
    MAX_DOCNO,
    MAX_QID,
    MAX_TAG,
    check_id,
    parse_float,
    parse_int,
    parse_lines,
    split_columns,
)
from .textio import ReadStats

RUN_COLUMNS = "qid Q0 docno rank score tag"
MAX_RANK = 2**31 - 1


class RunLine(NamedTuple):
    """One line of a run file; ``line`` is its 1-based line number."""

    line: int
    qid: str
    docno: str
    rank: int
    score: float
    tag: str


def parse_run_line(path: str | Path, line: int, text: str) -> RunLine:
    """Parse one non-blank run line, or raise :class:`ImportFormatError`."""
    columns = split_columns(path, line, text)
    if len(columns) != 6:
        raise ImportFormatError(
            path,
            line,
            f"wrong number of columns: {len(columns)}",
            expected=f"6 columns '{RUN_COLUMNS}'",
            got=text,
        )
    qid, _q0, docno, rank, score, tag = columns
    return RunLine(
        line=line,
        qid=check_id(path, line, qid, "qid", max_length=MAX_QID),
        docno=check_id(path, line, docno, "docno", max_length=MAX_DOCNO),
        rank=parse_int(path, line, rank, "rank", low=0, high=MAX_RANK),
        score=parse_float(path, line, score, "score"),
        tag=check_id(path, line, tag, "run tag", max_length=MAX_TAG),
    )


def parse_run(
    path: str | Path,
    *,
    encoding: str = "utf-8",
    sink: ErrorSink | None = None,
    stats: ReadStats | None = None,
) -> Iterator[RunLine]:
    """Yield the lines of a run file in file order (gzip when the name ends in ``.gz``).

    Raises :class:`ImportFormatError` (or reports to ``sink`` and skips the line) for a
    malformed line, a duplicate ``(qid, docno)`` or a tag that changes within the file;
    a file with no run line at all is an error too.
    """
    seen: dict[str, set[str]] = {}
    tag: str | None = None

    def parse(line: int, text: str) -> RunLine:
        nonlocal tag
        record = parse_run_line(path, line, text)
        if tag is None:
            tag = record.tag
        elif record.tag != tag:
            raise ImportFormatError(
                path,
                line,
                "run tag changes within the file",
                expected=repr(tag),
                got=record.tag,
            )
        docnos = seen.setdefault(record.qid, set())
        if record.docno in docnos:
            raise ImportFormatError(
                path,
                line,
                f"duplicate document for qid {record.qid!r}",
                expected="each (qid, docno) once",
                got=record.docno,
            )
        docnos.add(record.docno)
        return record

    yield from parse_lines(
        path,
        parse,
        encoding=encoding,
        sink=sink,
        stats=stats,
        empty="empty file: no run lines",
        expected=f"lines '{RUN_COLUMNS}'",
    )


def rank_by_score(lines: Iterable[RunLine]) -> list[RunLine]:
    """The lines in trec_eval's order with ``rank`` renumbered 1..n within each qid.

    Order: qids in order of first appearance; within a qid, score descending, then docno
    descending (code-point order, which equals trec_eval's byte-wise ``strcmp`` on UTF-8).
    """
    by_qid: dict[str, list[RunLine]] = {}
    for record in lines:
        by_qid.setdefault(record.qid, []).append(record)
    ranked: list[RunLine] = []
    for records in by_qid.values():
        # Two stable sorts: docno descending, then score descending on top of it.
        records.sort(key=lambda r: r.docno, reverse=True)
        records.sort(key=lambda r: r.score, reverse=True)
        ranked.extend(r._replace(rank=i) for i, r in enumerate(records, start=1))
    return ranked
