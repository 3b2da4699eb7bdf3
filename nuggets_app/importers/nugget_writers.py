"""Nugget files written: the project's JSONL, TREC RAG 2025 nuggets, TREC QA keys.

The inverse of :mod:`nuggets_app.importers.nuggets`: what a writer here produces, the
reader of the same format reads back to the same records (JSONL keeps every field; the
TREC formats keep what they can carry). Pure: records in, text out, deterministic byte
for byte (records in the order given, keys in a fixed order).

- ``jsonl``: one object per nugget, keys ``qid id text keywords grade aspect docno
  start end span assessor created changed judgment`` (absent values are ``null``).
- ``rag``: one line per topic, ``{"qid", "nuggets": [{"text", "importance",
  "mapped_sub_narrative"}]}``; importance ``vital`` for grade >= 2, else ``okay``.
- ``trec-qa``: ``Qid X: question`` then ``X N<TAB>vital|okay<TAB>text`` (same
  importance), N numbering the topic's nuggets from 1; a nugget's tabs and line
  breaks become spaces.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from .nuggets import NuggetRecord

WRITE_FORMATS = ("jsonl", "rag", "trec-qa")
VITAL_GRADE = 2
_ONE_LINE = re.compile(r"[\t\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def nugget_record_json(record: NuggetRecord) -> dict[str, Any]:
    """The JSONL object of one nugget, keys in the documented order."""
    return {
        "qid": record.qid,
        "id": record.source_id or None,
        "text": record.text,
        "keywords": list(record.keywords),
        "grade": record.grade,
        "aspect": record.aspect or None,
        "docno": record.docno,
        "start": record.start,
        "end": record.end,
        "span": record.span,
        "assessor": record.assessor or None,
        "created": _time(record.created),
        "changed": _time(record.changed),
        "judgment": record.judgment,
    }


def importance(grade: int | None) -> str:
    """``vital`` for grade >= 2 (the readers' vital), else ``okay``."""
    return "vital" if grade is not None and grade >= VITAL_GRADE else "okay"


def _by_topic(records: Iterable[NuggetRecord]) -> dict[str, list[NuggetRecord]]:
    topics: dict[str, list[NuggetRecord]] = {}
    for record in records:
        topics.setdefault(record.qid, []).append(record)
    return topics


def nuggets_write(
    records: Iterable[NuggetRecord],
    fmt: str = "jsonl",
    *,
    questions: Mapping[str, str] | None = None,
) -> str:
    """The text of a nugget file in ``fmt`` (``jsonl``, ``rag`` or ``trec-qa``);
    ``questions`` gives the trec-qa header text of each qid (default: empty)."""
    if fmt == "jsonl":
        return "".join(
            json.dumps(nugget_record_json(r), ensure_ascii=False) + "\n"
            for r in records
        )
    if fmt == "rag":
        lines = []
        for qid, nuggets in _by_topic(records).items():
            items = [
                {
                    "text": r.text,
                    "importance": importance(r.grade),
                    "mapped_sub_narrative": r.aspect,
                }
                for r in nuggets
            ]
            lines.append(json.dumps({"qid": qid, "nuggets": items}, ensure_ascii=False))
        return "".join(f"{line}\n" for line in lines)
    if fmt == "trec-qa":
        out: list[str] = []
        for qid, nuggets in _by_topic(records).items():
            question = " ".join((questions or {}).get(qid, "").split())
            out.append(f"Qid {qid}: {question}".rstrip())
            for number, r in enumerate(nuggets, start=1):
                # A line holds one nugget: only line breaks and tabs become spaces.
                text = _ONE_LINE.sub(" ", r.text)
                out.append(f"{qid} {number}\t{importance(r.grade)}\t{text}")
        return "".join(f"{line}\n" for line in out)
    raise ValueError(
        f"unknown nugget format {fmt!r}: one of {', '.join(WRITE_FORMATS)}"
    )
