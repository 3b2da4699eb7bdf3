"""An automatic judge's labels: TREC qrels, score files, runs, or probabilities.

Formats (``docs/reference/formats.md``, "Judge labels"):

- ``qrels``: ``qid iter docno grade``, an integer grade (binary labels are 0/1);
- ``scores``: ``qid Q0 docno score``, any finite number, higher is more relevant;
- ``run``: the 6-column run line ``qid Q0 docno rank score tag``; the score is kept
  (a probability or any monotone score), the rank and tag are not;
- ``jsonl``: one object a line, ``{"qid", "docno", "prob_0", ..., "prob_k"}`` (the
  probability of each grade, summing to 1) or ``{"qid", "docno", "prob_yes"}``;
- ``csv``: a header line naming ``qid``, ``docno`` and the same ``prob_`` columns.

``docid`` is accepted for ``docno``. ``auto`` decides by the file name (``.jsonl``,
``.json``, ``.csv``, also gzipped), then by the first data line: ``{`` is JSONL, a
comma CSV, 6 columns a run, 4 columns qrels when the last column is an integer and
scores otherwise (a score file whose scores are all integers needs ``scores``).
Repeated identical lines are read once; a repeated pair that disagrees is an error.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from .documents import json_object
from .errors import ErrorSink, ImportFormatError, ImportOptionError, json_type
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

FORMATS = ("auto", "qrels", "scores", "run", "jsonl", "csv")
# The judge's kind of labels each format gives (nuggets_app.models.Judge.Kind).
KIND_OF_FORMAT = {
    "qrels": "graded",
    "scores": "score",
    "run": "score",
    "jsonl": "probabilities",
    "csv": "probabilities",
}
_COLUMNS = {
    "qrels": (4, "qid iter docno grade"),
    "scores": (4, "qid Q0 docno score"),
    "run": (6, "qid Q0 docno rank score tag"),
}
# How far a row of per-grade probabilities may sum from 1 (rounding in the file).
SUM_TOLERANCE = 0.01
YES = "yes"


class JudgeLabelLine(NamedTuple):
    """One label: exactly one of ``grade``, ``score`` and ``probabilities`` is set
    (``probabilities``: ``{"0": p0, ...}`` or ``{"yes": p}``)."""

    line: int
    qid: str
    docno: str
    grade: int | None = None
    score: float | None = None
    probabilities: dict[str, float] | None = None


def _ids(path: str | Path, line: int, qid: str, docno: str) -> tuple[str, str]:
    return (
        check_id(path, line, qid, "qid", max_length=MAX_QID),
        check_id(path, line, docno, "docno", max_length=MAX_DOCNO),
    )


def _columns_line(path: str | Path, line: int, text: str, fmt: str) -> JudgeLabelLine:
    columns = split_columns(path, line, text)
    width, layout = _COLUMNS[fmt]
    if len(columns) != width:
        raise ImportFormatError(
            path,
            line,
            f"wrong number of columns for {fmt}: {len(columns)}",
            expected=f"{width} columns '{layout}'",
            got=text,
        )
    qid, docno = _ids(path, line, columns[0], columns[2])
    if fmt == "qrels":
        grade = parse_int(path, line, columns[3], "grade", low=-127, high=127)
        return JudgeLabelLine(line, qid, docno, grade=grade)
    value = columns[3] if fmt == "scores" else columns[4]
    return JudgeLabelLine(
        line, qid, docno, score=parse_float(path, line, value, "score")
    )


def _probability(path: str | Path, line: int, name: str, value: object) -> float:
    if isinstance(value, str):
        value = parse_float(path, line, value.strip(), name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ImportFormatError(
            path, line, f"{name} is not a number", got=json_type(value)
        )
    number = float(value)
    if not (math.isfinite(number) and 0.0 <= number <= 1.0):
        raise ImportFormatError(
            path, line, f"{name} outside [0, 1]", expected="0 <= p <= 1", got=value
        )
    return number


def probability_layout(path: str | Path, line: int, names: list[str]) -> list[str]:
    """The ``prob_`` fields of a record or header, checked: ``["yes"]`` or the grades
    ``["0", ..., "k"]`` (k >= 1, none missing)."""
    found = sorted(n.removeprefix("prob_") for n in names if n.startswith("prob_"))
    if found == [YES]:
        return found
    grades = [g for g in found if g.isdigit()]
    expected = "prob_yes, or prob_0 .. prob_k for every grade 0..k (k >= 1)"
    if not found or grades != found or len(found) < 2:
        raise ImportFormatError(
            path, line, "no probability fields", expected=expected, got=names
        )
    wanted = [str(g) for g in range(len(grades))]
    if sorted(grades, key=int) != wanted:
        raise ImportFormatError(
            path, line, "probability fields skip a grade", expected=expected, got=names
        )
    return wanted


def _probabilities_line(
    path: str | Path, line: int, fields: dict, layout: list[str]
) -> JudgeLabelLine:
    docno_key = "docno" if "docno" in fields or "docid" not in fields else "docid"
    for key in ("qid", docno_key):
        if fields.get(key) in (None, ""):
            raise ImportFormatError(path, line, f'missing field "{key}"')
    if probability_layout(path, line, list(fields)) != layout:
        raise ImportFormatError(
            path,
            line,
            "probability fields differ from the first record's",
            expected=", ".join(f"prob_{g}" for g in layout),
            got=sorted(k for k in fields if k.startswith("prob_")),
        )
    probs = {
        g: _probability(path, line, f"prob_{g}", fields[f"prob_{g}"]) for g in layout
    }
    if layout != [YES] and abs(math.fsum(probs.values()) - 1.0) > SUM_TOLERANCE:
        raise ImportFormatError(
            path,
            line,
            "probabilities of the grades do not sum to 1",
            expected=f"a sum within {SUM_TOLERANCE} of 1",
            got=round(math.fsum(probs.values()), 6),
        )
    qid, docno = _ids(path, line, str(fields["qid"]), str(fields[docno_key]))
    return JudgeLabelLine(line, qid, docno, probabilities=probs)


def _jsonl_parser(path: str | Path) -> Callable[[int, str], JudgeLabelLine]:
    layout: list[str] = []

    def parse(line: int, text: str) -> JudgeLabelLine:
        obj = json_object(path, line, text)
        if not layout:
            layout.extend(probability_layout(path, line, list(obj)))
        return _probabilities_line(path, line, obj, layout)

    return parse


def _csv_parser(path: str | Path) -> Callable[[int, str], JudgeLabelLine | None]:
    header: list[str] = []
    layout: list[str] = []

    def parse(line: int, text: str) -> JudgeLabelLine | None:
        row = next(csv.reader([text.rstrip("\r")]))
        if not header:
            header.extend(name.strip() for name in row)
            if "qid" not in header or not {"docno", "docid"} & set(header):
                raise ImportFormatError(
                    path,
                    line,
                    "the header does not name qid and docno",
                    expected="a header line such as qid,docno,prob_0,prob_1",
                    got=text,
                )
            layout.extend(probability_layout(path, line, header))
            return None
        if len(row) != len(header):
            raise ImportFormatError(
                path,
                line,
                f"wrong number of fields: {len(row)}",
                expected=f"{len(header)} fields as the header",
                got=text,
            )
        return _probabilities_line(
            path, line, dict(zip(header, row, strict=True)), layout
        )

    return parse


def _detect_line(path: str | Path, line: int, text: str) -> str:
    body = text.strip(" \t\r")
    if body.startswith("{"):
        return "jsonl"
    if "," in body:
        return "csv"
    columns = split_columns(path, line, text)
    if len(columns) == 6:
        return "run"
    if len(columns) == 4:
        return "qrels" if columns[3].lstrip("+-").isdigit() else "scores"
    raise ImportFormatError(
        path,
        line,
        f"cannot tell the format: {len(columns)} columns",
        expected="qrels or scores (4 columns), a run (6), JSONL or CSV",
        got=text,
    )


def detect_format(path: str | Path, *, encoding: str = "utf-8") -> str:
    """The format of a judge's file, by its name, then by its first data line."""
    name = str(path).lower().removesuffix(".gz")
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    if name.endswith(".csv"):
        return "csv"
    for line, text in iter_lines(path, encoding=encoding):
        if not is_skippable(text):
            return _detect_line(path, line, text)
    raise ImportFormatError(path, 1, "empty file: no labels")


def _line_parser(
    path: str | Path, fmt: str
) -> Callable[[int, str], JudgeLabelLine | None]:
    """The parser of one line of ``fmt`` that reads a repeated identical label once
    and refuses a repeated pair that disagrees."""
    if fmt == "jsonl":
        inner: Callable[[int, str], JudgeLabelLine | None] = _jsonl_parser(path)
    elif fmt == "csv":
        inner = _csv_parser(path)
    else:
        inner = lambda line, text: _columns_line(path, line, text, fmt)  # noqa: E731
    seen: dict[tuple[str, str], tuple] = {}

    def parse(line: int, text: str) -> JudgeLabelLine | None:
        record = inner(line, text)
        if record is None:
            return None
        key, value = (record.qid, record.docno), record[3:]
        earlier = seen.get(key)
        if earlier == value:
            return None
        if earlier is not None:
            raise ImportFormatError(
                path,
                line,
                f"conflicting labels for qid {record.qid!r}, docno {record.docno!r}",
                expected="the same label as before",
                got=text.rstrip("\r"),
            )
        seen[key] = value
        return record

    return parse


def parse_judge_labels(
    path: str | Path,
    fmt: str = "auto",
    *,
    encoding: str = "utf-8",
    sink: ErrorSink | None = None,
    stats: ReadStats | None = None,
) -> Iterator[JudgeLabelLine]:
    """Yield the labels of a judge's file in file order (gzip when the name ends in
    ``.gz``); ``fmt`` one of :data:`FORMATS`."""
    if fmt not in FORMATS:
        raise ImportOptionError(
            f"format must be one of {', '.join(FORMATS)}, not {fmt!r}"
        )
    if fmt == "auto":
        fmt = detect_format(path, encoding=encoding)
    yield from parse_lines(
        path,
        _line_parser(path, fmt),
        encoding=encoding,
        sink=sink,
        stats=stats,
        empty="empty file: no labels",
        expected=f"labels in the {fmt} format",
    )
