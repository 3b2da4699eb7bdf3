"""Relevance files: TREC qrels ``qid iter docno rel`` and prels ``qid docno rel method iprob``.

prels are the Million Query / statAP format: ``method`` is the selection method code and
``iprob`` the inclusion probability, in (0, 1] (``NA`` when unknown). The relevance grade is
an ASCII integer in -127..127 (trec_eval's range); in prels ``-999`` marks a placeholder row
whose probability is not checked. Repeated identical lines are read once; repeated pairs
that disagree are an error. ``kind="auto"`` decides by the column count of the first line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from .errors import ErrorSink, ImportFormatError
from .fields import (
    MAX_DOCNO,
    MAX_QID,
    check_id,
    is_skippable,
    parse_float,
    parse_int,
    parse_lines,
    split_columns,
)
from .textio import ReadStats, iter_lines

QRELS_COLUMNS = "qid iter docno rel"
PRELS_COLUMNS = "qid docno rel method inclusion_prob"
PLACEHOLDER_REL = -999
KINDS = ("auto", "qrels", "prels")


class QrelsLine(NamedTuple):
    """One judgment; ``method`` and ``inclusion_prob`` are None for plain qrels."""

    line: int
    qid: str
    docno: str
    rel: int
    method: int | None
    inclusion_prob: float | None


def _rel(path: str | Path, line: int, value: str, *, prels: bool) -> int:
    if prels and value == str(PLACEHOLDER_REL):
        return PLACEHOLDER_REL
    return parse_int(path, line, value, "relevance", low=-127, high=127)


def _parse_qrels_columns(path: str | Path, line: int, columns: list[str]) -> QrelsLine:
    qid, _iteration, docno, rel = columns
    return QrelsLine(
        line,
        check_id(path, line, qid, "qid", max_length=MAX_QID),
        check_id(path, line, docno, "docno", max_length=MAX_DOCNO),
        _rel(path, line, rel, prels=False),
        None,
        None,
    )


def _parse_prels_columns(path: str | Path, line: int, columns: list[str]) -> QrelsLine:
    qid, docno, rel_text, method_text, prob_text = columns
    rel = _rel(path, line, rel_text, prels=True)
    method = None
    if method_text != "NA":
        method = parse_int(path, line, method_text, "method", low=-32768, high=32767)
    prob = None
    if prob_text != "NA":
        prob = parse_float(path, line, prob_text, "inclusion probability")
        if not 0.0 < prob <= 1.0 and rel != PLACEHOLDER_REL:
            raise ImportFormatError(
                path,
                line,
                "inclusion probability outside (0, 1]",
                expected="0 < p <= 1, or NA",
                got=prob_text,
            )
    return QrelsLine(
        line,
        check_id(path, line, qid, "qid", max_length=MAX_QID),
        check_id(path, line, docno, "docno", max_length=MAX_DOCNO),
        rel,
        method,
        prob,
    )


def parse_qrels_line(path: str | Path, line: int, text: str, kind: str) -> QrelsLine:
    """Parse one non-blank line of a ``qrels`` or ``prels`` file."""
    columns = split_columns(path, line, text)
    width, layout = (4, QRELS_COLUMNS) if kind == "qrels" else (5, PRELS_COLUMNS)
    if len(columns) != width:
        raise ImportFormatError(
            path,
            line,
            f"wrong number of columns for {kind}: {len(columns)}",
            expected=f"{width} columns '{layout}'",
            got=text,
        )
    if kind == "qrels":
        return _parse_qrels_columns(path, line, columns)
    return _parse_prels_columns(path, line, columns)


def _detect(path: str | Path, line: int, text: str) -> str:
    width = len(split_columns(path, line, text))
    if width == 4:
        return "qrels"
    if width == 5:
        return "prels"
    raise ImportFormatError(
        path,
        line,
        f"cannot tell qrels from prels: {width} columns",
        expected=f"4 columns '{QRELS_COLUMNS}' or 5 columns '{PRELS_COLUMNS}'",
        got=text,
    )


def parse_qrels(
    path: str | Path,
    kind: str = "auto",
    *,
    encoding: str = "utf-8",
    sink: ErrorSink | None = None,
    stats: ReadStats | None = None,
) -> Iterator[QrelsLine]:
    """Yield the judgments of a qrels or prels file (gzip when the name ends in ``.gz``)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    seen: dict[tuple[str, str], tuple[int, int | None, float | None]] = {}

    def parse(line: int, text: str) -> QrelsLine | None:
        nonlocal kind
        if kind == "auto":
            kind = _detect(path, line, text)
        record = parse_qrels_line(path, line, text, kind)
        key = (record.qid, record.docno)
        value = (record.rel, record.method, record.inclusion_prob)
        earlier = seen.get(key)
        if earlier == value:
            return None
        if earlier is not None:
            raise ImportFormatError(
                path,
                line,
                f"conflicting judgments for qid {record.qid!r}, docno {record.docno!r}",
                expected=f"the same as before (rel {earlier[0]})",
                got=text.rstrip("\r"),
            )
        seen[key] = value
        return record

    yield from parse_lines(
        path,
        parse,
        encoding=encoding,
        sink=sink,
        stats=stats,
        empty="empty file: no judgments",
        expected=f"lines '{QRELS_COLUMNS}'",
    )


def detect_kind(path: str | Path, *, encoding: str = "utf-8") -> str:
    """``qrels`` or ``prels``, from the column count of the first data line."""
    for line, text in iter_lines(path, encoding=encoding):
        if not is_skippable(text):
            return _detect(path, line, text)
    raise ImportFormatError(path, 1, "empty file: no judgments")
