"""The one error type that leaves a parser: ``FILE:LINE: problem (expected ..., got ...)``.

Offending text is echoed repr-style (control characters escaped, so a crafted file cannot
inject terminal escape sequences) and truncated to 80 characters.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from nuggets_app.errors import DomainError

MAX_SHOWN = 80


def escape_text(value: object, limit: int = MAX_SHOWN) -> str:
    """``repr`` of ``value`` with control characters escaped, cut to ``limit`` chars."""
    if not isinstance(value, str | bytes):
        value = str(value)
    shown = repr(value)
    if len(shown) > limit:
        shown = shown[: limit - 3] + "..."
    return shown


def escape_path(path: object) -> str:
    """A file name safe to print: printable names unchanged, others repr-escaped."""
    text = str(path)
    if text.isprintable():
        return text
    return repr(text)[1:-1]


def json_type(value: object) -> str:
    """A parsed JSON value's type as JSON names it (``number``, not ``int``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


class ImportOptionError(DomainError):
    """An import option (format, kind, encoding, collection, source) the importer
    does not know; nothing has been read."""


class ImportFormatError(DomainError):
    """Bad input in an import file.

    Attributes: ``path`` (the file), ``line`` (1-based, counting ``\\n`` bytes as ``wc -l``
    does), ``problem`` (short description), ``message`` (the problem with its
    ``(expected ..., got ...)`` detail, untrusted text escaped).
    """

    def __init__(
        self,
        path: str | Path,
        line: int,
        problem: str,
        *,
        expected: str | None = None,
        got: object = None,
        column: int | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.column = column
        self.problem = problem
        self.expected = expected
        self.got = got
        detail = []
        if expected is not None:
            detail.append(f"expected {expected}")
        if got is not None:
            detail.append(f"got {escape_text(got)}")
        self.message = f"{problem} ({', '.join(detail)})" if detail else problem
        super().__init__(str(self))

    def location(self) -> str:
        """``FILE:LINE`` or ``FILE:LINE:COL``."""
        where = f"{escape_path(self.path)}:{self.line}"
        return f"{where}:{self.column}" if self.column is not None else where

    def __str__(self) -> str:
        return f"{self.location()}: {self.message}"

    def __reduce__(self):  # pragma: no cover - pickling for Celery results
        return (
            _rebuild,
            (self.path, self.line, self.problem, self.expected, self.got, self.column),
        )


def _rebuild(path, line, problem, expected, got, column) -> ImportFormatError:
    return ImportFormatError(
        path, line, problem, expected=expected, got=got, column=column
    )


class ImportFormatErrors(ImportFormatError):
    """Several errors from one file (``--max-errors``), in line order; behaves like the
    first one."""

    def __init__(self, errors: Iterable[ImportFormatError]) -> None:
        # A parser reports a line's own problems as it reads, and problems found
        # across lines (unknown qids, duplicates) later: people read them by line.
        self.errors = sorted(errors, key=lambda error: (error.path, error.line))
        first = self.errors[0]
        super().__init__(
            first.path,
            first.line,
            first.problem,
            expected=first.expected,
            got=first.got,
            column=first.column,
        )
        self.message = first.message

    def __str__(self) -> str:
        return "\n".join(ImportFormatError.__str__(e) for e in self.errors)


class ErrorSink:
    """Collects record-level errors so a parser can go on and report up to ``limit``.

    A parser given a sink reports a bad record, skips it and continues; when the limit
    is reached ``add`` raises :class:`ImportFormatErrors`. The loader calls ``check()``
    at the end so that nothing is saved when any record was bad.
    """

    def __init__(self, limit: int = 1) -> None:
        self.limit = max(1, limit)
        self.errors: list[ImportFormatError] = []

    def add(self, error: ImportFormatError) -> None:
        """Record ``error``; raise once ``limit`` errors are held."""
        self.errors.append(error)
        if len(self.errors) >= self.limit:
            raise ImportFormatErrors(self.errors)

    def check(self) -> None:
        """Raise the collected errors, if any."""
        if self.errors:
            raise ImportFormatErrors(self.errors)


def report(sink: ErrorSink | None, error: ImportFormatError) -> None:
    """Raise ``error`` at once, or hand it to ``sink`` (which raises at its limit)."""
    if sink is None:
        raise error
    sink.add(error)


def unknown_in_collection(
    path: str | Path, line: int, kind: str, key: str, collection: str
) -> ImportFormatError:
    """A line naming a topic (``kind`` "topic", ``key`` its qid) or a document
    ("document", its docno) that the collection named ``collection`` does not hold."""
    field = "qid" if kind == "topic" else "docno"
    return ImportFormatError(
        path,
        line,
        f"unknown {kind}",
        expected=f"a {field} of collection {collection!r}",
        got=key,
    )
