"""Topic files: TREC ``<top>`` format, TREC XML topics (with subtopics), and JSONL.

- TREC: ``<top> <num> Number: 1 <title> .. <desc> Description: .. <narr> Narrative: ..
  </top>``; the field labels are stripped; other tags (``<con>``, ``<smry>`` ..) are ignored.
- XML (e.g. the TREC Web track): ``<topic number=".."><query>..</query><description>..
  <subtopic number=".." type="..">..</subtopic></topic>``; parsed with defusedxml, so entity
  expansion and external references are refused.
- JSONL: ``{"qid", "title", "description", "narrative", "aspects"}``; ``aspects`` is a list
  of strings or of ``{"id", "text"}`` objects.

Text fields have whitespace runs collapsed to one space (topics carry no offsets). Aspects
come out as ``[{"id": str, "text": str}]`` plus ``"type"`` where the file gives one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple
from xml.etree.ElementTree import Element, ParseError

import defusedxml
import defusedxml.ElementTree as SafeET

from nuggets_app.importers.errors import ImportOptionError

from .documents import json_object
from .errors import ErrorSink, ImportFormatError, json_type, report
from .fields import MAX_QID
from .records import check_storable
from .textio import ReadStats, iter_lines

FORMATS = ("auto", "trec", "xml", "jsonl")
_TOP_TAG = re.compile(r"<(/?)top>", re.IGNORECASE)
_ANY_TAG = re.compile(r"<(/?)([A-Za-z][\w-]*)[^<>]*>")
_LABEL = re.compile(
    r"\A\s*(?:Number|Topic|Title|Description|Narrative)\s*:", re.IGNORECASE
)
_FIELDS = {"num": "qid", "title": "title", "desc": "description", "narr": "narrative"}


class TopicRecord(NamedTuple):
    """One topic; ``aspects`` is a list of ``{"id", "text"[, "type"]}`` dicts."""

    line: int
    qid: str
    title: str
    description: str
    narrative: str
    aspects: list[dict]


def _squash(text: str) -> str:
    return " ".join(text.split())


def _topic(
    path: str | Path, line: int, fields: dict, aspects: list[dict]
) -> TopicRecord:
    qid = fields.get("qid", "")
    if not qid:
        raise ImportFormatError(
            path, line, "topic without a number", expected="<num> Number: ID (or a qid)"
        )
    if " " in qid or len(qid) > MAX_QID:
        raise ImportFormatError(
            path,
            line,
            "bad topic number",
            expected=f"one token of at most {MAX_QID} chars",
            got=qid,
        )
    title = fields.get("title", "")
    if not title:
        raise ImportFormatError(
            path, line, "topic without a title", expected="<title>", got=qid
        )
    record = TopicRecord(
        line,
        qid,
        title,
        fields.get("description", ""),
        fields.get("narrative", ""),
        aspects,
    )
    for name, value in zip(
        ("qid", "title", "description", "narrative"), record[1:5], strict=True
    ):
        check_storable(path, line, name, value)
    return record


def _trec_topic(path: str | Path, line: int, body: str) -> TopicRecord:
    fields: dict[str, str] = {}
    tags = list(_ANY_TAG.finditer(body))
    for index, match in enumerate(tags):
        if match.group(1):
            continue
        name = _FIELDS.get(match.group(2).lower())
        if name is None:
            continue
        end = tags[index + 1].start() if index + 1 < len(tags) else len(body)
        value = _squash(_LABEL.sub("", body[match.end() : end], count=1))
        if name in fields:
            raise ImportFormatError(
                path,
                line + body.count("\n", 0, match.start()),
                f"second <{match.group(2)}> in one topic",
                got=value,
            )
        fields[name] = value
    return _topic(path, line, fields, [])


def parse_trec_topics(
    path: str | Path,
    *,
    encoding: str = "utf-8",
    sink: ErrorSink | None = None,
    stats: ReadStats | None = None,
) -> Iterator[TopicRecord]:
    """Yield the ``<top>`` topics of a TREC topic file."""
    start = 0
    parts: list[str] | None = None
    last = 0
    for line, text in iter_lines(path, encoding=encoding, stats=stats):
        last = line
        position = 0
        for match in _TOP_TAG.finditer(text):
            segment = text[position : match.start()]
            position = match.end()
            if parts is not None:
                parts.append(segment)
            elif segment.strip():
                raise ImportFormatError(path, line, "text outside <top>", got=segment)
            if not match.group(1):
                if parts is not None:
                    raise ImportFormatError(
                        path,
                        line,
                        f"<top> inside the topic opened at line {start}",
                        expected="</top> first",
                    )
                parts, start = [], line
                continue
            if parts is None:
                raise ImportFormatError(path, line, "</top> without <top>")
            try:
                record = _trec_topic(path, start, "".join(parts))
            except ImportFormatError as error:
                report(sink, error)
            else:
                yield record
            parts = None
        rest = text[position:]
        if parts is not None:
            parts.append(rest + "\n")
        elif rest.strip():
            raise ImportFormatError(path, line, "text outside <top>", got=rest)
    if parts is not None:
        raise ImportFormatError(
            path,
            max(last, 1),
            f"end of file inside the topic opened at line {start}",
            expected="</top>",
        )


def _child_text(element: Element, *names: str) -> str:
    for name in names:
        child = element.find(name)
        if child is not None:
            return _squash("".join(child.itertext()))
    return ""


def _xml_topic(path: str | Path, line: int, element: Element) -> TopicRecord:
    qid = (
        element.get("number")
        or element.get("id")
        or _child_text(element, "num", "number", "qid")
    )
    fields = {
        "qid": _squash(_LABEL.sub("", qid, count=1)),
        "title": _child_text(element, "query", "title"),
        "description": _child_text(element, "description", "desc", "question"),
        "narrative": _child_text(element, "narrative", "narr"),
    }
    aspects = []
    for index, sub in enumerate(element.iter("subtopic"), start=1):
        aspect = {
            "id": sub.get("number") or str(index),
            "text": _squash("".join(sub.itertext())),
        }
        if sub.get("type"):
            aspect["type"] = sub.get("type")
        aspects.append(aspect)
    return _topic(path, line, fields, aspects)


def parse_xml_topics(
    path: str | Path,
    *,
    encoding: str = "utf-8",
    sink: ErrorSink | None = None,
    stats: ReadStats | None = None,
) -> Iterator[TopicRecord]:
    """Yield the ``<topic>`` elements of an XML topic file (defusedxml; small files)."""
    lines = [text for _, text in iter_lines(path, encoding=encoding, stats=stats)]
    source = "\n".join(lines)
    source = re.sub(r"\A<\?xml[^>]*\?>", "", source)  # the text is already decoded
    try:
        root = SafeET.fromstring(source)
    except ParseError as exc:
        line, column = exc.position
        raise ImportFormatError(
            path, line, f"invalid XML: {exc}", column=column + 1
        ) from None
    except defusedxml.DefusedXmlException as exc:
        line = next((i for i, t in enumerate(lines, 1) if "<!ENTITY" in t), 1)
        raise ImportFormatError(
            path,
            line,
            "XML entity declarations and external references are refused",
            got=str(exc),
        ) from None
    starts = [
        i for i, text in enumerate(lines, 1) for _ in re.finditer(r"<topic[\s>]", text)
    ]
    for index, element in enumerate(root.iter("topic")):
        line = starts[index] if index < len(starts) else 1
        try:
            yield _xml_topic(path, line, element)
        except ImportFormatError as error:
            report(sink, error)


def _jsonl_aspects(path: str | Path, line: int, value: object) -> list[dict]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ImportFormatError(
            path, line, 'field "aspects" is not an array', got=json_type(value)
        )
    aspects = []
    for index, item in enumerate(value, start=1):
        if isinstance(item, str):
            aspects.append({"id": str(index), "text": _squash(item)})
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            aspect = {"id": str(item.get("id", index)), "text": _squash(item["text"])}
            if isinstance(item.get("type"), str):
                aspect["type"] = item["type"]
            aspects.append(aspect)
        else:
            raise ImportFormatError(
                path,
                line,
                f"aspect {index} is neither a string nor {{'id', 'text'}}",
                got=repr(item),
            )
    return aspects


def _jsonl_topic(path: str | Path, line: int, obj: dict) -> TopicRecord:
    # Said in the file's own terms, before the format-neutral checks of _topic.
    for name in ("qid", "title"):
        if obj.get(name) is None:
            raise ImportFormatError(path, line, f'missing field "{name}"')
        if obj[name] == "":
            raise ImportFormatError(path, line, f'empty field "{name}"')
    fields = {}
    for name in ("qid", "title", "description", "narrative"):
        value = obj.get(name)
        if name == "qid" and isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if value is not None and not isinstance(value, str):
            raise ImportFormatError(
                path,
                line,
                f'field "{name}" has the wrong type',
                expected="a string",
                got=json_type(value),
            )
        fields[name] = _squash(value or "")
    return _topic(path, line, fields, _jsonl_aspects(path, line, obj.get("aspects")))


def parse_jsonl_topics(
    path: str | Path,
    *,
    encoding: str = "utf-8",
    sink: ErrorSink | None = None,
    stats: ReadStats | None = None,
) -> Iterator[TopicRecord]:
    """Yield topics from JSONL, one object per line; blank lines are skipped."""
    for line, text in iter_lines(path, encoding=encoding, stats=stats):
        if not text.strip():
            continue
        try:
            yield _jsonl_topic(path, line, json_object(path, line, text))
        except ImportFormatError as error:
            report(sink, error)


def detect_topic_format(path: str | Path, *, encoding: str = "utf-8") -> str:
    """``jsonl``, ``xml`` or ``trec``, by file name, then by the first non-blank text."""
    name = Path(path).name.lower().removesuffix(".gz")
    if name.endswith((".jsonl", ".json", ".ndjson")):
        return "jsonl"
    if name.endswith(".xml"):
        return "xml"
    for line, text in iter_lines(path, encoding=encoding):
        stripped = text.lstrip().lower()
        if stripped.startswith("{"):
            return "jsonl"
        if stripped.startswith("<top"):
            return "trec" if re.match(r"<top[\s>]", stripped) else "xml"
        if stripped.startswith("<"):
            return "xml"
        if stripped:
            raise ImportFormatError(
                path,
                line,
                "cannot tell the topic format",
                expected="'<top>', XML or JSONL; or pass --format",
                got=text,
            )
    raise ImportFormatError(path, 1, "empty file: no topics")


def parse_topics(
    path: str | Path,
    *,
    fmt: str = "auto",
    encoding: str = "utf-8",
    sink: ErrorSink | None = None,
    stats: ReadStats | None = None,
) -> Iterator[TopicRecord]:
    """Yield the topics of ``path``; duplicate qids and files without topics are errors."""
    if fmt not in FORMATS:
        raise ImportOptionError(
            f"format must be one of {', '.join(FORMATS)}, not {fmt!r}"
        )
    if fmt == "auto":
        fmt = detect_topic_format(path, encoding=encoding)
    parser = {
        "trec": parse_trec_topics,
        "xml": parse_xml_topics,
        "jsonl": parse_jsonl_topics,
    }[fmt]
    first: dict[str, int] = {}
    for record in parser(path, encoding=encoding, sink=sink, stats=stats):
        if record.qid in first:
            report(
                sink,
                ImportFormatError(
                    path,
                    record.line,
                    f"duplicate topic (first at line {first[record.qid]})",
                    expected="each qid once",
                    got=record.qid,
                ),
            )
            continue
        first[record.qid] = record.line
        yield record
    if not first and not (sink and sink.errors):
        raise ImportFormatError(path, 1, "empty file: no topics")
