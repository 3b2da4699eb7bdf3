"""The one CSV writer of the project: cells that a spreadsheet would run as a formula
are neutralised (OWASP, "CSV Injection").

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a
leading single quote, so Excel, LibreOffice and Google Sheets show it as text instead
of evaluating it (``=HYPERLINK(...)``, ``+SUM(1+1)``, ``@SUM(1)``). Plain numbers such as
``-0.25`` or ``-1e-05`` are left alone: a spreadsheet reads them as numbers, never as a
formula. Every CSV the project writes (pages, downloads, ``diagnose`` files) goes
through :func:`csv_writer`.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import Any, Protocol

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


class _Writable(Protocol):
    def write(self, text: str, /) -> Any: ...


def csv_cell(value: object) -> str:
    """``value`` as a CSV cell that no spreadsheet evaluates."""
    text = "" if value is None else str(value)
    if text.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


class SafeCsvWriter:
    """``csv.writer`` (``\\n`` line ends) whose cells go through :func:`csv_cell`."""

    def __init__(self, stream: _Writable):
        self._writer = csv.writer(stream, lineterminator="\n")
        # With "\n" line ends the csv module leaves a lone "\r" unquoted, which
        # readers take for a line break: rows holding one are quoted in full.
        self._quoted = csv.writer(stream, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def writerow(self, row: Iterable[object]) -> None:
        cells = [csv_cell(v) for v in row]
        writer = self._quoted if any("\r" in c for c in cells) else self._writer
        writer.writerow(cells)

    def writerows(self, rows: Iterable[Iterable[object]]) -> None:
        for row in rows:
            self.writerow(row)


def csv_writer(stream: _Writable) -> SafeCsvWriter:
    """A CSV writer on ``stream`` (a file, ``io.StringIO`` or ``HttpResponse``)."""
    return SafeCsvWriter(stream)
