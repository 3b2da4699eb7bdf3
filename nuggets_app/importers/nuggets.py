"""Nugget files (nugget banks): the project's JSONL and three TREC nugget formats.

Every reader yields :class:`NuggetRecord` with the line it came from; a bad line is an
:class:`ImportFormatError` naming file and line. Nothing here touches the database: the
loader (:func:`nuggets_app.collection.services.nugget_banks.nugget_bank_import`) checks topics,
documents and offsets against the collection.

- ``jsonl`` (the project's own, written by ``export_nuggets``): one nugget per line,
  ``{"qid", "text", "keywords"?, "grade"?, "aspect"?, "id"?, "docno"?, "start"?,
  "end"?, "span"?, "assessor"?, "created"?, "changed"?, "judgment"?}``. ``docno``,
  ``start`` and ``end`` go together (character offsets into the document's canonical
  text, ``[start, end)``); ``span``, when given, must equal the text at the offsets;
  ``assessor`` (who made the nugget), ``created``/``changed`` (ISO 8601 times with a
  zone) and ``judgment`` (that assessor's grade of the document) are its provenance.
- ``trec-qa``: TREC QA nugget answer keys (2003-2007 definition/other, ciQA,
  relationship): ``Qid X: question`` header lines, then ``X N<TAB>vital|okay<TAB>text``;
  vital is grade 2, okay grade 1. Pyramid files (``X<TAB>N<TAB>weight<TAB>text``) give
  nuggets without a grade.
- ``rag``: TREC RAG 2025 nuggets, one topic per line, ``{"qid", "nuggets": [{"text",
  "importance": "vital"|"okay", "mapped_sub_narrative"}]}``; vital is grade 2, okay 1,
  the sub-narrative (outer quotes removed) is the aspect.
- ``trec-ts``: TREC Temporal Summarization nuggets, the track's TSV (``query_id
  nugget_id timestamp importance nugget_len nugget_text`` with that header) or JSONL
  ``{"qid", "nugget_id", "text", "importance"}``; the importance (1-3, -1 as
  released) is the grade.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from nuggets_app.importers.errors import ImportOptionError

from .documents import json_object
from .errors import ErrorSink, ImportFormatError, json_type, report
from .fields import MAX_QID
from .records import check_storable
from .textio import iter_lines

FORMATS = ("auto", "jsonl", "trec-qa", "rag", "trec-ts")
MAX_TEXT_CHARS = 5000
MAX_KEYWORDS = 20
MAX_KEYWORD_CHARS = 100
MAX_ASPECT_CHARS = 200
MAX_SOURCE_ID = 100
MAX_ASSESSOR_CHARS = 150
LABEL_GRADES = {"vital": 2, "okay": 1}
TS_HEADER = (
    "query_id",
    "nugget_id",
    "timestamp",
    "importance",
    "nugget_len",
    "nugget_text",
)


class NuggetRecord(NamedTuple):
    """One nugget of a file; ``docno``/``start``/``end`` are all None or all set."""

    line: int
    qid: str
    text: str
    keywords: tuple[str, ...] = ()
    grade: int | None = None
    aspect: str = ""
    source_id: str = ""
    docno: str | None = None
    start: int | None = None
    end: int | None = None
    span: str | None = None
    # The question or topic text where the file gives one (trec-qa headers).
    topic_text: str = ""
    # Provenance in the project's JSONL: who made the nugget, when, and the grade
    # they gave its document.
    assessor: str = ""
    created: datetime | None = None
    changed: datetime | None = None
    judgment: int | None = None


def detect_format(path: str | Path, *, encoding: str = "utf-8") -> str:
    """The format of ``path`` from its first non-empty line."""
    for line, text in iter_lines(path, encoding=encoding):
        stripped = text.strip()
        if not stripped:
            continue
        if stripped.startswith("{"):
            obj = json_object(path, line, stripped)
            if "nuggets" in obj:
                return "rag"
            if "nugget_id" in obj and "importance" in obj:
                return "trec-ts"
            return "jsonl"
        if stripped.startswith("Qid ") or _pyramid_fields(stripped.split("\t")):
            return "trec-qa"
        if tuple(stripped.split("\t")) == TS_HEADER:
            return "trec-ts"
        raise ImportFormatError(
            path,
            line,
            "cannot tell the nugget format",
            expected="a JSON object, a 'Qid X:' header or the TREC TS header",
            got=stripped[:60],
        )
    raise ImportFormatError(path, 1, "empty file: no nuggets")


def parse_nuggets(
    path: str | Path,
    fmt: str = "auto",
    *,
    encoding: str = "utf-8",
    sink: ErrorSink | None = None,
) -> Iterator[NuggetRecord]:
    """Yield the nuggets of ``path`` in ``fmt`` (``auto`` detects it).

    Without a ``sink`` the first bad line raises; with one, bad lines are reported to
    it (which raises at its limit) and skipped.
    """
    if fmt == "auto":
        fmt = detect_format(path, encoding=encoding)
    readers = {"jsonl": _jsonl, "trec-qa": _trec_qa, "rag": _rag, "trec-ts": _trec_ts}
    if fmt not in readers:
        raise ImportOptionError(
            f"unknown nugget format {fmt!r}: one of {', '.join(FORMATS)}"
        )
    count = 0
    # What a reader carries from line to line (the trec-qa question header).
    state: dict[str, str] = {}
    for line, text in iter_lines(path, encoding=encoding):
        if not text.strip():
            continue
        try:
            records = readers[fmt](path, line, text, state)
            for record in records:
                count += 1
                yield record
        except ImportFormatError as error:
            report(sink, error)
    if count == 0 and (sink is None or not sink.errors):
        raise ImportFormatError(path, 1, "empty file: no nuggets")


def _str(path: str | Path, line: int, obj: dict, key: str, *, required: bool) -> str:
    value = obj.get(key)
    if value is None:
        if required:
            raise ImportFormatError(path, line, f"missing field {json.dumps(key)}")
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool) and key == "qid":
        value = str(value)
    if not isinstance(value, str):
        raise ImportFormatError(
            path,
            line,
            f"field {json.dumps(key)} is not a string",
            got=json_type(value),
        )
    return check_storable(path, line, key, value.strip())


def _qid(path: str | Path, line: int, qid: str) -> str:
    if not qid or len(qid) > MAX_QID or any(c.isspace() for c in qid):
        raise ImportFormatError(
            path,
            line,
            "bad qid",
            expected=f"1-{MAX_QID} characters without spaces",
            got=qid,
        )
    return qid


def _text(path: str | Path, line: int, text: str) -> str:
    text = check_storable(path, line, "text", text.strip())
    if not text:
        raise ImportFormatError(path, line, "empty nugget text")
    if len(text) > MAX_TEXT_CHARS:
        raise ImportFormatError(
            path,
            line,
            f"nugget text longer than {MAX_TEXT_CHARS} characters",
            got=text,
        )
    return text


def _int(path: str | Path, line: int, key: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ImportFormatError(
            path, line, f"field {json.dumps(key)} is not an integer", got=value
        )
    return value


def _keywords(path: str | Path, line: int, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(w, str) for w in value):
        raise ImportFormatError(
            path, line, 'field "keywords" is not an array of strings', got=value
        )
    words: list[str] = []
    for word in value:
        word = check_storable(path, line, "keywords", word.strip())
        if len(word) > MAX_KEYWORD_CHARS:
            raise ImportFormatError(
                path,
                line,
                f"keyword longer than {MAX_KEYWORD_CHARS} characters",
                got=word,
            )
        if word and word not in words:
            words.append(word)
    if len(words) > MAX_KEYWORDS:
        raise ImportFormatError(path, line, f"more than {MAX_KEYWORDS} keywords")
    return tuple(words)


def _aspect(path: str | Path, line: int, aspect: str) -> str:
    if len(aspect) > MAX_ASPECT_CHARS:
        raise ImportFormatError(
            path,
            line,
            f"aspect longer than {MAX_ASPECT_CHARS} characters",
            got=aspect,
        )
    return aspect


def _source_id(path: str | Path, line: int, value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ImportFormatError(
            path, line, "nugget id is not a string or integer", got=value
        )
    text = check_storable(path, line, "id", str(value).strip())
    if len(text) > MAX_SOURCE_ID:
        raise ImportFormatError(
            path, line, f"nugget id longer than {MAX_SOURCE_ID} characters", got=text
        )
    return text


def _jsonl(
    path: str | Path, line: int, text: str, state: dict[str, str]
) -> list[NuggetRecord]:
    obj = json_object(path, line, text)
    qid = _qid(path, line, _str(path, line, obj, "qid", required=True))
    located = [k for k in ("docno", "start", "end") if obj.get(k) is not None]
    docno, start, end = None, None, None
    if located:
        if len(located) < 3:
            missing = sorted({"docno", "start", "end"} - set(located))
            raise ImportFormatError(
                path,
                line,
                "docno, start and end go together",
                expected="all three or none",
                got=f"missing {', '.join(missing)}",
            )
        docno = _str(path, line, obj, "docno", required=True)
        start = _int(path, line, "start", obj["start"])
        end = _int(path, line, "end", obj["end"])
        assert start is not None
        assert end is not None
        if not 0 <= start < end:
            raise ImportFormatError(
                path,
                line,
                "bad offsets",
                expected="0 <= start < end",
                got=f"start {start}, end {end}",
            )
    span = obj.get("span")
    if span is not None and (docno is None or not isinstance(span, str)):
        raise ImportFormatError(
            path, line, 'field "span" needs docno/start/end and must be a string'
        )
    return [
        NuggetRecord(
            line=line,
            qid=qid,
            text=_text(path, line, _str(path, line, obj, "text", required=True)),
            keywords=_keywords(path, line, obj.get("keywords")),
            grade=_int(path, line, "grade", obj.get("grade")),
            aspect=_aspect(path, line, _str(path, line, obj, "aspect", required=False)),
            source_id=_source_id(path, line, obj.get("id")),
            docno=docno,
            start=start,
            end=end,
            span=span,
            assessor=_assessor(path, line, obj),
            created=_time(path, line, "created", obj.get("created")),
            changed=_time(path, line, "changed", obj.get("changed")),
            judgment=_int(path, line, "judgment", obj.get("judgment")),
        )
    ]


def _time(path: str | Path, line: int, key: str, value: Any) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        raise ImportFormatError(
            path,
            line,
            f"field {key!r} is not a time",
            expected="ISO 8601 with a zone, e.g. 2026-01-31T09:15:00+00:00",
            got=value,
        )
    return parsed


def _assessor(path: str | Path, line: int, obj: dict) -> str:
    name = _str(path, line, obj, "assessor", required=False)
    if len(name) > MAX_ASSESSOR_CHARS:
        raise ImportFormatError(
            path,
            line,
            f"assessor longer than {MAX_ASSESSOR_CHARS} characters",
            got=name,
        )
    return name


def _pyramid_fields(fields: list[str]) -> bool:
    if len(fields) != 4:
        return False
    try:
        weight = float(fields[2])
    except ValueError:
        return False
    return fields[1].strip().isdigit() and math.isfinite(weight)


def _trec_qa(
    path: str | Path, line: int, text: str, state: dict[str, str]
) -> list[NuggetRecord]:
    stripped = text.strip()
    if stripped.startswith("Qid "):
        head, _, question = stripped[4:].partition(":")
        qid = _qid(path, line, head.strip())
        state["qid"], state["question"] = qid, " ".join(question.split())
        return []
    fields = text.rstrip("\r").split("\t")
    if _pyramid_fields(fields):
        qid, number, _weight, nugget = fields
        grade = None
    elif len(fields) == 3:
        qid, _, number = fields[0].strip().partition(" ")
        label = fields[1].strip().lower()
        if label not in LABEL_GRADES:
            raise ImportFormatError(
                path, line, "bad nugget label", expected="vital or okay", got=fields[1]
            )
        grade = LABEL_GRADES[label]
        nugget = fields[2]
    else:
        raise ImportFormatError(
            path,
            line,
            "not a nugget line",
            expected="'X N<TAB>vital|okay<TAB>text' or 'X<TAB>N<TAB>weight<TAB>text'",
            got=text,
        )
    qid = _qid(path, line, qid.strip())
    number = number.strip()
    if not number.isdigit():
        raise ImportFormatError(
            path, line, "bad nugget number", expected="a number", got=number
        )
    topic_text = state.get("question", "") if state.get("qid") == qid else ""
    return [
        NuggetRecord(
            line=line,
            qid=qid,
            text=_text(path, line, nugget),
            grade=grade,
            source_id=number,
            topic_text=topic_text,
        )
    ]


def _unquote(aspect: str) -> str:
    aspect = aspect.strip()
    if len(aspect) >= 2 and aspect[0] == aspect[-1] == '"':
        aspect = aspect[1:-1].strip()
    return aspect


def _rag(
    path: str | Path, line: int, text: str, state: dict[str, str]
) -> list[NuggetRecord]:
    obj = json_object(path, line, text)
    qid = _qid(path, line, _str(path, line, obj, "qid", required=True))
    nuggets = obj.get("nuggets")
    if not isinstance(nuggets, list) or not nuggets:
        raise ImportFormatError(
            path, line, 'field "nuggets" is not a non-empty array', got=nuggets
        )
    records = []
    for number, nugget in enumerate(nuggets, start=1):
        if not isinstance(nugget, dict):
            raise ImportFormatError(
                path, line, f"nugget {number} is not an object", got=nugget
            )
        label = str(nugget.get("importance", "")).strip().lower()
        if label not in LABEL_GRADES:
            raise ImportFormatError(
                path,
                line,
                f"nugget {number}: bad importance",
                expected="vital or okay",
                got=nugget.get("importance"),
            )
        aspect = _str(path, line, nugget, "mapped_sub_narrative", required=False)
        records.append(
            NuggetRecord(
                line=line,
                qid=qid,
                text=_text(path, line, _str(path, line, nugget, "text", required=True)),
                grade=LABEL_GRADES[label],
                aspect=_aspect(path, line, _unquote(aspect)),
                source_id=str(number),
            )
        )
    return records


def _trec_ts(
    path: str | Path, line: int, text: str, state: dict[str, str]
) -> list[NuggetRecord]:
    if text.lstrip().startswith("{"):
        obj = json_object(path, line, text)
        qid = _str(path, line, obj, "qid", required=True)
        nugget_id = _source_id(path, line, obj.get("nugget_id"))
        importance = _int(path, line, "importance", obj.get("importance"))
        nugget = _str(path, line, obj, "text", required=True)
    else:
        fields = text.rstrip("\r").split("\t")
        if tuple(fields) == TS_HEADER:
            return []
        if len(fields) != len(TS_HEADER):
            raise ImportFormatError(
                path,
                line,
                f"expected {len(TS_HEADER)} tab-separated fields",
                expected="\t".join(TS_HEADER),
                got=text,
            )
        qid, nugget_id, _, grade_text, _, nugget = fields
        try:
            importance = int(grade_text)
        except ValueError:
            raise ImportFormatError(
                path, line, "importance is not an integer", got=grade_text
            ) from None
        nugget_id = _source_id(path, line, nugget_id)
    if not nugget_id:
        raise ImportFormatError(path, line, "missing nugget id")
    return [
        NuggetRecord(
            line=line,
            qid=_qid(path, line, qid.strip()),
            text=_text(path, line, nugget),
            grade=importance,
            source_id=nugget_id,
        )
    ]
