"""The line formats (runs, qrels): the line loop, column splitting, strict ASCII numbers.

Python's own parsing is too lenient for these files: ``int('1_0') == 10``,
``int('٣') == 3``, ``float('nan')`` and ``str.split()`` splitting on NBSP. Here columns
are separated by ASCII spaces and tabs only, and numbers are plain ASCII.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from .errors import ErrorSink, ImportFormatError, report
from .textio import ReadStats, iter_lines

_SEPARATORS = re.compile(r"[ \t]+")
_INT = re.compile(r"[+-]?[0-9]+\Z")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
# Any character that is whitespace or a control/format character besides space and tab.
_BAD_CHAR = re.compile(
    r"[^\S \t]|[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\ufeff]"
)
R = TypeVar("R")


def qid_key(qid: str) -> tuple:
    """Sort key: numeric qids in numeric order first, then the others as text."""
    return (0, int(qid), "") if qid.isdigit() else (1, 0, qid)


def _describe(char: str) -> str:
    name = unicodedata.name(char, "control character")
    return f"U+{ord(char):04X} {name}"


def split_columns(path: str | Path, line: int, text: str) -> list[str]:
    """Split a line on ASCII spaces/tabs; one trailing ``\\r`` (CRLF) is allowed.

    Any other whitespace or control character (NBSP, a lone ``\\r``, vertical tab, NUL,
    zero-width space ...) is an error, because other tools would split differently.
    """
    body = text[:-1] if text.endswith("\r") else text
    bad = _BAD_CHAR.search(body)
    if bad is not None:
        raise ImportFormatError(
            path,
            line,
            f"unexpected character {_describe(bad.group())} at column {bad.start() + 1}",
            expected="columns separated by ASCII spaces or tabs",
            got=body,
        )
    body = body.strip(" \t")
    return _SEPARATORS.split(body) if body else []


def parse_int(
    path: str | Path, line: int, value: str, what: str, *, low: int, high: int
) -> int:
    """An ASCII decimal integer within ``[low, high]``."""
    if not _INT.match(value):
        raise ImportFormatError(
            path, line, f"{what} is not an integer", expected="ASCII digits", got=value
        )
    number = int(value)
    if not low <= number <= high:
        raise ImportFormatError(
            path, line, f"{what} out of range", expected=f"{low}..{high}", got=value
        )
    return number


def parse_float(path: str | Path, line: int, value: str, what: str) -> float:
    """A finite ASCII decimal float (no ``nan``, ``inf``, ``1_0`` or overflow to inf)."""
    if not _FLOAT.match(value):
        raise ImportFormatError(
            path,
            line,
            f"{what} is not a finite decimal number",
            expected="e.g. 12.5 or -1e-3",
            got=value,
        )
    number = float(value)
    if not math.isfinite(number):
        raise ImportFormatError(
            path, line, f"{what} overflows", expected="a finite number", got=value
        )
    return number


def check_id(
    path: str | Path, line: int, value: str, what: str, *, max_length: int
) -> str:
    """An identifier (qid, docno, run tag) that fits its database column."""
    if len(value) > max_length:
        raise ImportFormatError(
            path,
            line,
            f"{what} longer than {max_length} characters",
            expected=f"at most {max_length} characters",
            got=value,
        )
    return value


def is_skippable(text: str) -> bool:
    """Blank lines and ``#`` comment lines are skipped, as trec_eval skips them in runs."""
    body = text.strip(" \t\r")
    return not body or body.startswith("#")


def parse_lines(
    path: str | Path,
    parse: Callable[[int, str], R | None],
    *,
    encoding: str,
    sink: ErrorSink | None,
    stats: ReadStats | None,
    empty: str,
    expected: str,
) -> Iterator[R]:
    """Yield ``parse(line, text)`` for every line that is not blank or a ``#`` comment.

    A line ``parse`` rejects with :class:`ImportFormatError` is reported to ``sink``
    (raised without one) and skipped; a line it returns None for is skipped silently.
    A file without any such line is an error: ``empty``, expecting ``expected``.
    """
    good = bad = last = 0
    for line, text in iter_lines(path, encoding=encoding, stats=stats):
        last = line
        if is_skippable(text):
            continue
        try:
            record = parse(line, text)
        except ImportFormatError as error:
            bad += 1
            report(sink, error)
            continue
        if record is None:
            continue
        good += 1
        yield record
    if good == 0 and bad == 0:
        raise ImportFormatError(path, max(last, 1), empty, expected=expected)


# Column widths of Document.docno, Topic.qid and Run.name.
MAX_DOCNO = 200
MAX_QID = 64
MAX_TAG = 200
