"""Records the collection parsers yield, and the checks every text field passes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from .errors import ImportFormatError
from .fields import MAX_DOCNO

_BAD_ID_CHAR = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\ufeff]")
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


class DocRecord(NamedTuple):
    """One document: ``text`` is canonical; ``html`` is sanitized, or empty."""

    line: int
    docno: str
    title: str
    text: str
    html: str


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR become LF; nothing else changes."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def check_docno(path: str | Path, line: int, docno: str) -> str:
    """A non-empty docno without whitespace or control characters, at most 200 chars."""
    if not docno:
        raise ImportFormatError(path, line, "empty docno", expected="a document id")
    bad = _BAD_ID_CHAR.search(docno)
    if bad is not None:
        raise ImportFormatError(
            path,
            line,
            "docno contains whitespace or a control character",
            expected="a docno without spaces",
            got=docno,
        )
    if len(docno) > MAX_DOCNO:
        raise ImportFormatError(
            path, line, f"docno longer than {MAX_DOCNO} characters", got=docno
        )
    return docno


def check_storable(path: str | Path, line: int, what: str, value: str) -> str:
    """Reject NUL and lone surrogates, which no database text column can hold."""
    bad = _UNSTORABLE.search(value)
    if bad is not None:
        raise ImportFormatError(
            path,
            line,
            f"{what} contains U+{ord(bad.group()):04X} at character {bad.start()}",
            expected="text without NUL or unpaired surrogates",
            got=value[max(0, bad.start() - 20) : bad.start() + 20],
        )
    return value
