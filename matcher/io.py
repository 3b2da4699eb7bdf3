"""Input and output of ``python -m matcher score``: a contract other tools rely on.

- NUGGETS (JSON lines): ``{"topic": str, "id": str, "text": str,
  "keywords": [str] (optional), "grade": int (optional)}``.
- DOCS (JSON lines, plain or gzip): ``{"docno": str, "text": str}``.
- PAIRS (optional text): ``topic docno`` per line.
- Output (JSON lines): ``{"topic", "docno", "score", "nugget", "spans"}``.

Blank lines are skipped; other fields are ignored. Every problem raises
:class:`MatcherError` worded ``FILE:LINE: problem`` (line 0: the file as a
whole, e.g. it cannot be opened).
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from json.encoder import encode_basestring_ascii
from typing import IO, Any, NamedTuple

from .options import MatcherError
from .score import NO_MATCH, DocumentMatch, NuggetSpec

_GZIP_MAGIC = b"\x1f\x8b"
_INF = float("inf")
# json.loads's own decoder configuration; its C scanner is called directly (an
# attribute JSONDecoder sets, which the type stubs do not declare).
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_LINE_ENDS = ("", "\n", "\r\n")


class Document(NamedTuple):
    """One document read from DOCS, with its line number."""

    line: int
    docno: str
    text: str


class Pair(NamedTuple):
    """One ``topic docno`` line of PAIRS."""

    line: int
    topic: str
    docno: str


def _open(path: str) -> IO[bytes]:
    try:
        return open(path, "rb")
    except OSError as exc:
        raise MatcherError(f"{path}:0: cannot open: {exc.strerror or exc}") from None


def read_lines(path: str) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each non-blank line; gzip detected by content."""
    lineno = 0
    with _open(path) as raw_handle:
        try:
            handle: IO[bytes] = raw_handle
            # peek, not read + seek, so pipes such as /dev/stdin work too.
            if raw_handle.peek(2)[:2] == _GZIP_MAGIC:  # type: ignore[attr-defined]
                handle = gzip.GzipFile(fileobj=raw_handle, mode="rb")  # type: ignore[assignment]
            for lineno, raw in enumerate(handle, 1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise MatcherError(
                        f"{path}:{lineno}: not UTF-8 (byte {exc.start + 1})"
                    ) from None
                if lineno == 1 and text.startswith("\ufeff"):
                    text = text[1:]  # a byte-order mark some editors write
                if text and not text.isspace():  # what strip() tests, without a copy
                    yield lineno, text
        except (OSError, EOFError, zlib.error) as exc:
            raise MatcherError(f"{path}:{lineno + 1}: cannot read: {exc}") from None


def _object(path: str, lineno: int, text: str) -> dict[str, Any]:
    # A line holding exactly one JSON value and its line end (every JSON-lines
    # writer's output) is parsed by the C scanner alone, skipping json.loads's
    # wrapper (a tenth of reading a short document); anything else goes through
    # json.loads, which accepts or refuses it with its own message.
    try:
        value, end = _SCAN(text, 0)
    except (StopIteration, ValueError):
        pass
    else:
        if isinstance(value, dict) and text[end:] in _LINE_ENDS:
            return value
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MatcherError(
            f"{path}:{lineno}: invalid JSON: {exc.msg} (column {exc.colno})"
        ) from None
    if not isinstance(value, dict):
        raise MatcherError(f"{path}:{lineno}: expected a JSON object")
    return value


def _string(path: str, lineno: int, record: dict[str, Any], name: str) -> str:
    if name not in record:
        raise MatcherError(f'{path}:{lineno}: missing field "{name}"')
    value = record[name]
    if not isinstance(value, str):
        raise MatcherError(f'{path}:{lineno}: field "{name}" must be a string')
    return value


def _nugget(path: str, lineno: int, record: dict[str, Any]) -> tuple[str, NuggetSpec]:
    topic = _string(path, lineno, record, "topic")
    nugget_id = _string(path, lineno, record, "id")
    text = _string(path, lineno, record, "text")
    if not topic.strip():
        raise MatcherError(f'{path}:{lineno}: field "topic" must not be empty')
    if not nugget_id:
        raise MatcherError(f'{path}:{lineno}: field "id" must not be empty')
    keywords = record.get("keywords", [])
    if not isinstance(keywords, list) or not all(isinstance(w, str) for w in keywords):
        raise MatcherError(
            f'{path}:{lineno}: field "keywords" must be a list of strings'
        )
    grade = record.get("grade")
    if grade is not None and (isinstance(grade, bool) or not isinstance(grade, int)):
        raise MatcherError(f'{path}:{lineno}: field "grade" must be an integer')
    return topic, NuggetSpec(nugget_id, text, tuple(keywords), grade)


def read_nuggets(path: str) -> dict[str, list[NuggetSpec]]:
    """Every nugget of NUGGETS, grouped by topic, topics and nuggets in file order.

    The whole file is validated before returning, so a caller prints nothing
    for a bad file.
    """
    topics: dict[str, list[NuggetSpec]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for lineno, text in read_lines(path):
        topic, spec = _nugget(path, lineno, _object(path, lineno, text))
        previous = first_line.setdefault((topic, spec.id), lineno)
        if previous != lineno:
            raise MatcherError(
                f'{path}:{lineno}: duplicate nugget id "{spec.id}" for topic '
                f'"{topic}" (first on line {previous})'
            )
        topics.setdefault(topic, []).append(spec)
    return topics


def iter_documents(path: str) -> Iterator[Document]:
    """Stream DOCS one document at a time (memory bounded by the longest line)."""
    for lineno, text in read_lines(path):
        record = _object(path, lineno, text)
        docno = _string(path, lineno, record, "docno")
        body = _string(path, lineno, record, "text")
        if not docno.strip():
            raise MatcherError(f'{path}:{lineno}: field "docno" must not be empty')
        yield Document(lineno, docno, body)


def read_pairs(path: str) -> dict[str, list[Pair]]:
    """PAIRS grouped by docno, each docno's pairs in file order."""
    pairs: dict[str, list[Pair]] = {}
    seen: dict[tuple[str, str], int] = {}
    for lineno, text in read_lines(path):
        fields = text.split()
        if len(fields) != 2:
            raise MatcherError(
                f"{path}:{lineno}: expected 2 fields (topic docno), got {len(fields)}"
            )
        topic, docno = fields
        previous = seen.setdefault((topic, docno), lineno)
        if previous != lineno:
            raise MatcherError(
                f"{path}:{lineno}: duplicate pair {topic} {docno} "
                f"(first on line {previous})"
            )
        pairs.setdefault(docno, []).append(Pair(lineno, topic, docno))
    return pairs


def encode_string(value: str) -> str:
    """``json.dumps(value)`` for a string (the encoder json.dumps itself calls)."""
    return encode_basestring_ascii(value)


def format_result_json(topic_json: str, docno_json: str, match: DocumentMatch) -> str:
    """:func:`format_result` with topic and docno already JSON-encoded (each is
    encoded once per topic or document, not once per pair); the same text."""
    if match is NO_MATCH:  # most pairs
        return (
            f'{{"topic": {topic_json}, "docno": {docno_json}, "score": 0.0, '
            '"nugget": null, "spans": []}'
        )
    score = match.score
    if type(score) is not float or score != score or score in (_INF, -_INF):
        score_text = json.dumps(score)
    else:
        score_text = repr(score)  # what json.dumps writes for a finite float
    nugget = "null" if match.nugget is None else encode_string(match.nugget)
    spans = ", ".join([f"[{start}, {end}]" for start, end in match.spans])
    return (
        f'{{"topic": {topic_json}, "docno": {docno_json}, "score": {score_text}, '
        f'"nugget": {nugget}, "spans": [{spans}]}}'
    )


def format_result(topic: str, docno: str, match: DocumentMatch) -> str:
    """One output line (without newline) for a (topic, document) pair."""
    return json.dumps(
        {
            "topic": topic,
            "docno": docno,
            "score": match.score,
            "nugget": match.nugget,
            "spans": [list(span) for span in match.spans],
        }
    )
