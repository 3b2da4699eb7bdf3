"""Document collections: TREC SGML, JSONL, or a directory of ``.txt``/``.html`` files.

Every parser yields :class:`DocRecord` in file order and streams (a document at a time).
Canonical text: fields are stripped of surrounding whitespace, inner tags are removed and
entities decoded (SGML), HTML becomes text through :func:`nuggets_app.lib.html.html_to_text`,
and newlines (CRLF, lone CR) become ``\\n``. Nothing else is normalised, because nugget
offsets index into this text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from nuggets_app.importers.errors import ImportOptionError
from nuggets_app.lib.html import html_extract, sanitize_html

from .errors import ErrorSink, ImportFormatError, json_type, report
from .records import DocRecord, check_docno, check_storable, normalize_newlines
from .sgml import parse_trec_sgml
from .textio import ReadStats, check_encoding, iter_lines

FORMATS = ("auto", "trec", "jsonl", "dir")
DIRECTORY_SUFFIXES = (".txt", ".html", ".htm")
MAX_FILE_BYTES = 64 * 1024 * 1024


def detect_format(path: str | Path, *, encoding: str = "utf-8") -> str:
    """``dir``, ``jsonl`` or ``trec``: by file type, name, then the first non-blank char."""
    path = Path(path)
    if path.is_dir():
        return "dir"
    name = path.name.lower().removesuffix(".gz")
    if name.endswith((".jsonl", ".ndjson", ".json")):
        return "jsonl"
    if name.endswith((".trec", ".sgml", ".sgm", ".trectext", ".trecweb")):
        return "trec"
    for line, text in iter_lines(path, encoding=encoding):
        stripped = text.lstrip()
        if stripped.startswith("{"):
            return "jsonl"
        if stripped.startswith("<"):
            return "trec"
        if stripped:
            raise ImportFormatError(
                path,
                line,
                "cannot tell the collection format",
                expected="'<DOC>' (TREC) or '{' (JSONL); or pass --format",
                got=text,
            )
    raise ImportFormatError(path, 1, "empty file: no documents")


def parse_collection(
    path: str | Path,
    *,
    fmt: str = "auto",
    encoding: str = "utf-8",
    encoding_errors: str = "strict",
    sink: ErrorSink | None = None,
    stats: ReadStats | None = None,
) -> Iterator[DocRecord]:
    """Yield the documents of ``path`` in ``fmt`` (``auto`` detects it).

    Raises :class:`ImportFormatError` on bad input, including a duplicate docno and a
    file without documents (record-level problems go to ``sink`` when given).
    """
    if fmt not in FORMATS:
        raise ImportOptionError(
            f"format must be one of {', '.join(FORMATS)}, not {fmt!r}"
        )
    check_encoding(encoding, encoding_errors)
    if fmt == "auto":
        fmt = detect_format(path, encoding=encoding)
    if fmt == "dir":
        records = parse_directory(
            path, encoding=encoding, encoding_errors=encoding_errors, stats=stats
        )
    elif fmt == "jsonl":
        records = parse_jsonl_docs(
            path,
            encoding=encoding,
            encoding_errors=encoding_errors,
            sink=sink,
            stats=stats,
        )
    else:
        records = parse_trec_sgml(
            path,
            encoding=encoding,
            encoding_errors=encoding_errors,
            sink=sink,
            stats=stats,
        )
    yield from _unique(path, records, sink)


def _unique(
    path: str | Path, records: Iterator[DocRecord], sink: ErrorSink | None
) -> Iterator[DocRecord]:
    first_line: dict[str, int] = {}
    count = 0
    for record in records:
        earlier = first_line.get(record.docno)
        if earlier is not None:
            report(
                sink,
                ImportFormatError(
                    path,
                    record.line,
                    f"duplicate docno (first at line {earlier})",
                    expected="each docno once",
                    got=record.docno,
                ),
            )
            continue
        first_line[record.docno] = record.line
        count += 1
        yield record
    if count == 0 and not (sink and sink.errors):
        raise ImportFormatError(path, 1, "empty collection: no documents")


def _json_str(
    path: str | Path, line: int, obj: dict, key: str, *, required: bool
) -> str:
    value = obj.get(key)
    if value is None:
        if required:
            raise ImportFormatError(path, line, f"missing field {json.dumps(key)}")
        return ""
    if isinstance(value, int) and not isinstance(value, bool) and key == "docno":
        value = str(value)
    if not isinstance(value, str):
        raise ImportFormatError(
            path,
            line,
            f"field {json.dumps(key)} has the wrong type",
            expected="a string",
            got=json_type(value),
        )
    return check_storable(path, line, key, value)


def json_object(path: str | Path, line: int, text: str) -> dict:
    """Parse one JSONL line that must hold an object."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(
            path, line, f"invalid JSON: {exc.msg}", column=exc.colno, got=text[:60]
        ) from None
    except RecursionError:
        raise ImportFormatError(path, line, "JSON nested too deeply") from None
    if not isinstance(obj, dict):
        raise ImportFormatError(
            path, line, "not a JSON object", expected="{...}", got=json_type(obj)
        )
    return obj


def jsonl_doc(path: str | Path, line: int, obj: dict) -> DocRecord:
    """A document from a JSONL object ``{"docno","title","text"}`` or ``{"docno","html"}``."""
    if "docno" not in obj and "doc_id" in obj:
        obj = {**obj, "docno": obj["doc_id"]}
    docno = check_docno(path, line, _json_str(path, line, obj, "docno", required=True))
    title = normalize_newlines(_json_str(path, line, obj, "title", required=False))
    html = _json_str(path, line, obj, "html", required=False)
    if "text" in obj or not html:
        if "text" not in obj:
            raise ImportFormatError(path, line, 'missing field "text" (or "html")')
        text = normalize_newlines(_json_str(path, line, obj, "text", required=True))
    else:
        html_title, text = html_extract(html)
        title = title or html_title
    return DocRecord(
        line, docno, title.strip(), text, sanitize_html(html) if html else ""
    )


def parse_jsonl_docs(
    path: str | Path,
    *,
    encoding: str = "utf-8",
    encoding_errors: str = "strict",
    sink: ErrorSink | None = None,
    stats: ReadStats | None = None,
) -> Iterator[DocRecord]:
    """Yield documents from JSONL, one object per line; blank lines are skipped."""
    lines = iter_lines(
        path, encoding=encoding, encoding_errors=encoding_errors, stats=stats
    )
    for line, text in lines:
        if not text.strip():
            continue
        try:
            record = jsonl_doc(path, line, json_object(path, line, text))
        except ImportFormatError as error:
            report(sink, error)
            continue
        yield record


def _read_document_file(file: Path, encoding: str, encoding_errors: str) -> str:
    size = file.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ImportFormatError(file, 1, f"file larger than {MAX_FILE_BYTES} bytes")
    raw = file.read_bytes().removeprefix(b"\xef\xbb\xbf")
    try:
        return raw.decode(encoding, errors=encoding_errors)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ImportFormatError(
            file,
            line,
            f"cannot decode as {encoding} at byte offset {exc.start}",
            expected=f"valid {encoding}; or pass --encoding",
            got=raw[max(0, exc.start - 10) : exc.end + 10],
        ) from None


def parse_directory(
    path: str | Path,
    *,
    encoding: str = "utf-8",
    encoding_errors: str = "strict",
    stats: ReadStats | None = None,
) -> Iterator[DocRecord]:
    """Yield one document per ``.txt``/``.html`` file under ``path`` (docno = file stem);
    ``stats`` counts the bytes of the files read."""
    root = Path(path)
    files = sorted(
        f
        for f in root.rglob("*")
        if f.is_file() and f.suffix.lower() in DIRECTORY_SUFFIXES
    )
    for file in files:
        content = _read_document_file(file, encoding, encoding_errors)
        if stats is not None:
            stats.bytes += file.stat().st_size
        check_storable(file, 1, "the file", content)
        docno = check_docno(file, 1, file.stem)
        if file.suffix.lower() == ".txt":
            yield DocRecord(
                1, docno, "", normalize_newlines(content).strip(" \t\n"), ""
            )
        else:
            title, text = html_extract(content)
            yield DocRecord(1, docno, title, text, sanitize_html(content))
