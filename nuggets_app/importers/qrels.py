"""Relevance files: TREC qrels ``qid iter docno rel``, prels ``qid docno rel method iprob``
and probabilistic qrels ``qid docno rel p pi source``.

prels are the Million Query / statAP format: ``method`` is the selection method code and
``iprob`` the inclusion probability, in (0, 1] (``NA`` when unknown). The relevance grade is
an ASCII integer in -127..127 (trec_eval's range); in prels ``-999`` marks a placeholder row
whose probability is not checked. Repeated identical lines are read once; repeated pairs
that disagree are an error. ``kind="auto"`` decides by the column count of the first line.

Probabilistic qrels (``prob``, what ``export_qrels --kind probabilistic`` writes): ``rel``
is the human grade, or -1 when nobody judged the document; ``p`` the probability of
relevance in [0, 1]; ``pi`` the inclusion probability in (0, 1], or -1 when unknown;
``source`` is ``human`` (then rel >= 0) or ``model`` (then rel = -1).

Subtopic qrels (``subtopics``, the TREC diversity format that ``export_qrels --kind
subtopics`` writes): ``qid subtopic docno rel``, one line per (topic, subtopic,
document). They have four columns like plain qrels, so they are never auto-detected:
ask for them by kind. A subtopic of ``0`` or ``Q0`` is refused as ambiguous (it is the
iteration column of plain qrels); a repeated (qid, subtopic, docno) with another grade
is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from nuggets_app.importers.errors import ImportOptionError
from nuggets_app.ir.prels import PLACEHOLDER_REL

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
PROB_COLUMNS = "qid docno rel p pi source"
SUBTOPIC_COLUMNS = "qid subtopic docno rel"
MAX_SUBTOPIC = 200
ITERATION_VALUES = ("0", "Q0")
UNJUDGED_REL = -1
KINDS = ("auto", "qrels", "prels", "prob", "subtopics")
_WIDTHS = {
    "qrels": (4, QRELS_COLUMNS),
    "prels": (5, PRELS_COLUMNS),
    "prob": (6, PROB_COLUMNS),
    "subtopics": (4, SUBTOPIC_COLUMNS),
}


class QrelsLine(NamedTuple):
    """One judgment; ``method`` and ``inclusion_prob`` are None for plain qrels,
    ``probability`` is set for probabilistic qrels only, ``subtopic`` for subtopic
    qrels only."""

    line: int
    qid: str
    docno: str
    rel: int
    method: int | None
    inclusion_prob: float | None
    probability: float | None = None
    subtopic: str | None = None


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


def _parse_prob_columns(path: str | Path, line: int, columns: list[str]) -> QrelsLine:
    qid, docno, rel_text, p_text, pi_text, source = columns
    rel = parse_int(path, line, rel_text, "relevance", low=-127, high=127)
    p = parse_float(path, line, p_text, "probability")
    if not 0.0 <= p <= 1.0:
        raise ImportFormatError(
            path, line, "probability outside [0, 1]", expected="0 <= p <= 1", got=p_text
        )
    pi = parse_float(path, line, pi_text, "inclusion probability")
    if pi != -1 and not 0.0 < pi <= 1.0:
        raise ImportFormatError(
            path,
            line,
            "inclusion probability outside (0, 1]",
            expected="0 < pi <= 1, or -1",
            got=pi_text,
        )
    if source not in ("human", "model"):
        raise ImportFormatError(
            path, line, "unknown source", expected="human or model", got=source
        )
    if (source == "human") != (rel != UNJUDGED_REL) or (source == "human" and rel < 0):
        raise ImportFormatError(
            path,
            line,
            f"relevance {rel} does not fit source {source}",
            expected="human with a grade >= 0, or model with -1",
            got=" ".join(columns),
        )
    return QrelsLine(
        line,
        check_id(path, line, qid, "qid", max_length=MAX_QID),
        check_id(path, line, docno, "docno", max_length=MAX_DOCNO),
        rel,
        None,
        None if pi == -1 else pi,
        p,
    )


def _parse_subtopic_columns(
    path: str | Path, line: int, columns: list[str]
) -> QrelsLine:
    qid, subtopic, docno, rel = columns
    if subtopic in ITERATION_VALUES:
        raise ImportFormatError(
            path,
            line,
            f"ambiguous subtopic {subtopic!r}: it reads as the iteration column of "
            "plain qrels (import those with --kind qrels)",
            expected=f"'{SUBTOPIC_COLUMNS}' with a subtopic id other than 0 or Q0",
            got=" ".join(columns),
        )
    # The columns of plain qrels with the subtopic where the iteration stands.
    plain = _parse_qrels_columns(path, line, [qid, "0", docno, rel])
    return plain._replace(
        subtopic=check_id(path, line, subtopic, "subtopic", max_length=MAX_SUBTOPIC)
    )


def parse_qrels_line(path: str | Path, line: int, text: str, kind: str) -> QrelsLine:
    """Parse one non-blank line of a ``qrels``, ``prels``, ``prob`` or ``subtopics``
    file."""
    columns = split_columns(path, line, text)
    width, layout = _WIDTHS[kind]
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
    if kind == "prob":
        return _parse_prob_columns(path, line, columns)
    if kind == "subtopics":
        return _parse_subtopic_columns(path, line, columns)
    return _parse_prels_columns(path, line, columns)


def _detect(path: str | Path, line: int, text: str) -> str:
    width = len(split_columns(path, line, text))
    if width == 4:
        return "qrels"
    if width == 5:
        return "prels"
    if width == 6:
        return "prob"
    raise ImportFormatError(
        path,
        line,
        f"cannot tell qrels from prels: {width} columns",
        expected=(
            f"4 columns '{QRELS_COLUMNS}', 5 columns '{PRELS_COLUMNS}' or 6 columns "
            f"'{PROB_COLUMNS}'"
        ),
        got=text,
    )


def _line_parser(path: str | Path, kind: str) -> Callable[[int, str], QrelsLine | None]:
    """The parser of one line of ``kind`` (``auto``: decided by the first line) that
    reads a repeated identical line once and rejects a repeated pair that disagrees."""
    if kind not in KINDS:
        raise ImportOptionError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    seen: dict[
        tuple[str, str, str | None], tuple[int, int | None, float | None, float | None]
    ] = {}

    def parse(line: int, text: str) -> QrelsLine | None:
        nonlocal kind
        if kind == "auto":
            kind = _detect(path, line, text)
        record = parse_qrels_line(path, line, text, kind)
        key = (record.qid, record.docno, record.subtopic)
        value = (record.rel, record.method, record.inclusion_prob, record.probability)
        earlier = seen.get(key)
        if earlier == value:
            return None
        if earlier is not None:
            what = f"qid {record.qid!r}, docno {record.docno!r}"
            if record.subtopic is not None:
                what = (
                    f"qid {record.qid!r}, subtopic {record.subtopic!r}, "
                    f"docno {record.docno!r}"
                )
            raise ImportFormatError(
                path,
                line,
                f"conflicting judgments for {what}",
                expected=f"the same as before (rel {earlier[0]})",
                got=text.rstrip("\r"),
            )
        seen[key] = value
        return record

    return parse


def parse_qrels(
    path: str | Path,
    kind: str = "auto",
    *,
    encoding: str = "utf-8",
    sink: ErrorSink | None = None,
    stats: ReadStats | None = None,
) -> Iterator[QrelsLine]:
    """Yield the judgments of a qrels, prels, probabilistic or subtopic qrels file
    (gzip when the name ends in ``.gz``)."""
    parse = _line_parser(path, kind)
    yield from parse_lines(
        path,
        parse,
        encoding=encoding,
        sink=sink,
        stats=stats,
        empty="empty file: no judgments",
        expected=f"lines '{_WIDTHS.get(kind, (4, QRELS_COLUMNS))[1]}'",
    )


def parse_qrels_text(
    lines: Iterable[str], kind: str, *, source: str = "<qrels>"
) -> Iterator[QrelsLine]:
    """The judgments of lines already in memory (an export read back, a test's text),
    parsed exactly as :func:`parse_qrels` parses a file; ``source`` names them in
    errors."""
    parse = _line_parser(source, kind)
    for line, raw in enumerate(lines, 1):
        text = raw.rstrip("\n")
        if is_skippable(text):
            continue
        record = parse(line, text)
        if record is not None:
            yield record


def subtopic_qrels_read(
    records: Iterable[QrelsLine],
) -> dict[str, dict[str, dict[str, int]]]:
    """Subtopic qrels records as ``qid -> subtopic -> docno -> grade``."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for record in records:
        subtopic = record.subtopic or ""
        out.setdefault(record.qid, {}).setdefault(subtopic, {})[record.docno] = (
            record.rel
        )
    return out


def detect_kind(path: str | Path, *, encoding: str = "utf-8") -> str:
    """``qrels``, ``prels`` or ``prob``, from the column count of the first data
    line."""
    for line, text in iter_lines(path, encoding=encoding):
        if not is_skippable(text):
            return _detect(path, line, text)
    raise ImportFormatError(path, 1, "empty file: no judgments")
