"""Passage files of the character-level measures (docs/reference/algorithms.md 5).

- Passage qrels: ``qid docno start length`` (character offsets into the canonical
  text); a line of length 0 marks a judged document without relevant text.
- Passage runs: ``qid docno start length rank score tag``, each topic's passages ranked
  by score descending, then rank.
- Document lengths: JSONL objects with ``docno`` and ``text`` or ``length``.

Every span is bounded by its document's length: a span past the end of its document, or
of an unknown document, is an :class:`ImportFormatError` naming the file and line.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from nuggets_app.ir.passages import Passage
from nuggets_app.ir.spans import Span

from .errors import ImportFormatError

# qid -> docno -> relevant spans (an empty list: judged, nothing relevant)
Judged = dict[str, dict[str, list[Span]]]


@dataclass(frozen=True)
class PassageRun:
    """A passage run: its tag and each topic's passages, best first."""

    name: str
    passages: dict[str, list[Passage]]


def _open(path: str) -> IO[str]:
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def _records(
    source: str, lines: Iterable[str], columns: int, what: str
) -> Iterator[tuple[int, list[str]]]:
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != columns:
            raise ImportFormatError(
                source, number, f"{what} needs {columns} columns, got {len(fields)}"
            )
        yield number, fields


def passage_span(
    source: str, number: int, fields: list[str], lengths: dict[str, int]
) -> Span:
    """The ``[begin, end)`` span of a ``qid docno start length ...`` line, checked
    against the document's length."""
    _qid, docno, start, length = fields[:4]
    if not (start.isdigit() and length.isdigit()):
        raise ImportFormatError(
            source, number, "start and length must be integers >= 0"
        )
    if docno not in lengths:
        raise ImportFormatError(source, number, f"unknown document {docno}")
    begin, end = int(start), int(start) + int(length)
    if end > lengths[docno]:
        raise ImportFormatError(
            source,
            number,
            f"span {begin}+{length} ends past the end of document {docno} "
            f"({lengths[docno]} characters)",
        )
    return (begin, end)


def passage_qrels_lines(
    lines: Iterable[str], lengths: dict[str, int], *, source: str
) -> Judged:
    """Passage qrels lines as ``qid -> {docno: relevant spans}``."""
    judged: Judged = {}
    for number, fields in _records(source, lines, 4, "a passage qrels line"):
        span = passage_span(source, number, fields, lengths)
        spans = judged.setdefault(fields[0], {}).setdefault(fields[1], [])
        if span[1] > span[0]:
            spans.append(span)
    return judged


def read_passage_qrels(path: str, lengths: dict[str, int]) -> Judged:
    """A passage qrels file (gzip when the name ends in ``.gz``)."""
    with _open(path) as handle:
        return passage_qrels_lines(handle, lengths, source=path)


def read_passage_run(path: str, lengths: dict[str, int]) -> PassageRun:
    """A passage run file, each topic's passages by score descending, then rank."""
    rows: dict[str, list[tuple[float, int, int, Passage]]] = {}
    tag = Path(path).name
    with _open(path) as handle:
        for number, fields in _records(path, handle, 7, "a passage run line"):
            begin, end = passage_span(path, number, fields, lengths)
            try:
                rank, score = int(fields[4]), float(fields[5])
            except ValueError:
                raise ImportFormatError(
                    path, number, "rank or score is not a number"
                ) from None
            if not math.isfinite(score):
                raise ImportFormatError(path, number, f"score is {fields[5]}")
            tag = fields[6]
            passage = Passage(fields[1], begin, end - begin)
            rows.setdefault(fields[0], []).append((-score, rank, number, passage))
    return PassageRun(tag, {q: [p for *_, p in sorted(r)] for q, r in rows.items()})


def read_doc_lengths(path: str) -> dict[str, int]:
    """``docno -> length in characters`` from JSONL (``text`` or ``length``)."""
    lengths: dict[str, int] = {}
    with _open(path) as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                docno = str(row["docno"])
                size = int(row["length"]) if "length" in row else len(row["text"])
            except (ValueError, KeyError, TypeError) as error:
                raise ImportFormatError(
                    path,
                    number,
                    f"expected JSON with docno and text or length ({error})",
                ) from None
            lengths[docno] = size
    return lengths
