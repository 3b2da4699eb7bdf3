"""TREC SGML collections: ``<DOC><DOCNO>..</DOCNO> fields.. </DOC>``, one document at a time.

Title fields (``TITLE``, ``HEADLINE``, ``HEAD``, ``HL``, ``TI``) become the title; text
fields (``TEXT``, ``BODY``, ``LP``, ``LEADPARA``, ``ABSTRACT``, ``SUMMARY``, ``GRAPHIC``)
become the text, joined by an empty line, inner tags removed and entities decoded. A
document with no known field is read as the rest of its content (trecweb style: HTML after
``<DOCHDR>`` is converted to text and kept sanitized). ``<DOC id="...">`` stands in for a
missing DOCNO (AQUAINT style).
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Iterator
from pathlib import Path

from nuggets_app.lib.html import html_extract, sanitize_html

from .errors import ErrorSink, ImportFormatError, report
from .records import DocRecord, check_docno, check_storable, normalize_newlines
from .textio import ReadStats, iter_lines

TITLE_FIELDS = ("TITLE", "HEADLINE", "HEAD", "HL", "TI")
TEXT_FIELDS = ("TEXT", "BODY", "LP", "LEADPARA", "ABSTRACT", "SUMMARY", "GRAPHIC")
_DOC_TAG = re.compile(r"<(/?)DOC(?=[\s>])([^>]*)>", re.IGNORECASE)
_FIELD_TAG = re.compile(
    r"<(/?)(" + "|".join(TITLE_FIELDS + TEXT_FIELDS) + r")(?=[\s>])[^>]*>",
    re.IGNORECASE,
)
_DOCNO = re.compile(r"<DOCNO(?:\s[^>]*)?>(.*?)</DOCNO\s*>", re.IGNORECASE | re.DOTALL)
_DOCNO_OPEN = re.compile(r"<DOCNO[\s>]", re.IGNORECASE)
_META = re.compile(
    r"<(DOCNO|DOCHDR|DOCID)(?:\s[^>]*)?>.*?</\1\s*>", re.IGNORECASE | re.DOTALL
)
_DOC_ID_ATTR = re.compile(r"""\bid\s*=\s*["']?([^"'\s>]+)""", re.IGNORECASE)
_TAG = re.compile(r"<[^<>]*>")
_LOOKS_HTML = re.compile(r"<(html|body|head|p|div|br|table)\b", re.IGNORECASE)
_WEB_PAGE = re.compile(r"<(?:html|body)\b|<!doctype\s+html", re.IGNORECASE)
_ASCII_SPACE = " \t\r\n"


class _Doc:
    """The raw text of one ``<DOC>`` being read, with where it started."""

    def __init__(self, line: int, attributes: str) -> None:
        self.line = line
        self.attributes = attributes
        self.parts: list[str] = []

    def line_of(self, body: str, position: int) -> int:
        return self.line + body.count("\n", 0, position)


def _clean_field(raw: str) -> str:
    if "<" in raw:
        raw = _TAG.sub("", raw)
    if "&" in raw:
        raw = html_lib.unescape(raw)
    return normalize_newlines(raw).strip(_ASCII_SPACE)


def _fields(path: str | Path, doc: _Doc, body: str) -> tuple[list[str], list[str]]:
    """Outermost title and text fields in document order; checks they are closed."""
    titles: list[str] = []
    texts: list[str] = []
    stack: list[tuple[str, int, int]] = []
    for match in _FIELD_TAG.finditer(body):
        closing, name = match.group(1), match.group(2).upper()
        if not closing:
            stack.append((name, match.start(), match.end()))
            continue
        if not stack or stack[-1][0] != name:
            raise ImportFormatError(
                path,
                doc.line_of(body, match.start()),
                f"</{name}> does not close an open field",
                expected=f"</{stack[-1][0]}>" if stack else f"<{name}> before it",
                got=match.group(),
            )
        _, start, content_start = stack.pop()
        if not stack:
            content = _clean_field(body[content_start : match.start()])
            (titles if name in TITLE_FIELDS else texts).append(content)
    if stack:
        name, start, _ = stack[-1]
        raise ImportFormatError(
            path,
            doc.line_of(body, start),
            f"<{name}> is never closed",
            expected=f"</{name}> before </DOC>",
        )
    return titles, texts


def _docno(path: str | Path, doc: _Doc, body: str) -> str:
    found = list(_DOCNO.finditer(body))
    opened = len(_DOCNO_OPEN.findall(body))
    if opened != len(found):
        raise ImportFormatError(
            path, doc.line, "unclosed <DOCNO>", expected="<DOCNO>id</DOCNO>"
        )
    if len(found) > 1:
        raise ImportFormatError(
            path,
            doc.line_of(body, found[1].start()),
            "second <DOCNO> in one document",
            expected="one DOCNO per <DOC>",
            got=found[1].group(),
        )
    if found:
        raw, line = found[0].group(1), doc.line_of(body, found[0].start(1))
    else:
        attribute = _DOC_ID_ATTR.search(doc.attributes)
        if attribute is None:
            raise ImportFormatError(
                path, doc.line, "document without <DOCNO>", expected="<DOCNO>id</DOCNO>"
            )
        raw, line = attribute.group(1), doc.line
    return check_docno(path, line, html_lib.unescape(raw).strip(_ASCII_SPACE))


def _record(path: str | Path, doc: _Doc) -> DocRecord:
    body = "".join(doc.parts)
    docno = _docno(path, doc, body)
    rest = _META.sub("", body) if _WEB_PAGE.search(body) else body
    html = ""
    # A web page (trecweb) has HTML tags such as <title> and <head> that would be
    # mistaken for TREC fields, so it is recognised first.
    if _WEB_PAGE.search(rest):
        title, text = html_extract(rest)
        html = sanitize_html(rest)
    else:
        titles, texts = _fields(path, doc, body)
        if titles or texts:
            title = " ".join(t for t in titles if t)
            text = "\n\n".join(t for t in texts if t)
        elif _LOOKS_HTML.search(rest := _META.sub("", body)):
            title, text = html_extract(rest)
            html = sanitize_html(rest)
        else:
            title, text = "", _clean_field(rest)
    check_storable(path, doc.line, "document text", text)
    return DocRecord(doc.line, docno, title, normalize_newlines(text), html)


def parse_trec_sgml(
    path: str | Path,
    *,
    encoding: str = "utf-8",
    encoding_errors: str = "strict",
    sink: ErrorSink | None = None,
    stats: ReadStats | None = None,
) -> Iterator[DocRecord]:
    """Yield the ``<DOC>`` elements of a TREC SGML file (gzip by extension).

    Structural errors (text outside ``<DOC>``, a nested ``<DOC>``, a missing ``</DOC>``
    at the end of the file, NUL bytes) stop the file; a bad document (missing, empty or
    repeated DOCNO, an unclosed field) is reported to ``sink`` when one is given.
    """
    doc: _Doc | None = None
    last = 0
    lines = iter_lines(
        path, encoding=encoding, encoding_errors=encoding_errors, stats=stats
    )
    for line, text in lines:
        last = line
        if "\x00" in text:
            raise ImportFormatError(
                path, line, "NUL byte", column=text.index("\x00") + 1, got=text[:40]
            )
        if doc is not None and "<" not in text:
            doc.parts.append(text + "\n")  # the common case: a line of body text
            continue
        position = 0
        for match in _DOC_TAG.finditer(text):
            segment = text[position : match.start()]
            position = match.end()
            if doc is not None:
                doc.parts.append(segment)
            elif segment.strip(_ASCII_SPACE):
                raise _outside(path, line, segment)
            if not match.group(1):
                if doc is not None:
                    raise ImportFormatError(
                        path,
                        line,
                        f"<DOC> inside the document opened at line {doc.line}",
                        expected="</DOC> first",
                        got=match.group(),
                    )
                doc = _Doc(line, match.group(2))
                continue
            if doc is None:
                raise ImportFormatError(
                    path, line, "</DOC> without <DOC>", got=match.group()
                )
            try:
                record = _record(path, doc)
            except ImportFormatError as error:
                report(sink, error)
            else:
                yield record
            doc = None
        rest = text[position:]
        if doc is not None:
            doc.parts.append(rest + "\n")
        elif rest.strip(_ASCII_SPACE):
            raise _outside(path, line, rest)
    if doc is not None:
        raise ImportFormatError(
            path,
            max(last, 1),
            f"end of file inside the document opened at line {doc.line}",
            expected="</DOC>",
        )


def _outside(path: str | Path, line: int, segment: str) -> ImportFormatError:
    return ImportFormatError(
        path, line, "text outside <DOC>...</DOC>", expected="<DOC>", got=segment.strip()
    )
