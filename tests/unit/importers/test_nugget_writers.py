"""Nugget files written: what the writers produce, the readers read back; the real
TREC QA 2003 key and RAG 2025 file go round the TREC formats with their grades."""

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nuggets_app.importers.errors import ImportFormatError
from nuggets_app.importers.nugget_writers import importance, nuggets_write
from nuggets_app.importers.nuggets import NuggetRecord, parse_nuggets

_TEXT = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1
).filter(lambda t: t.strip() == t and t)


@given(
    text=_TEXT,
    keywords=st.lists(_TEXT, max_size=3, unique=True),
    grade=st.none() | st.integers(-1, 3),
    aspect=st.just("") | _TEXT.filter(lambda t: len(t) <= 200),
    start=st.integers(0, 10_000),
    length=st.integers(1, 500),
    judgment=st.none() | st.integers(0, 3),
    minutes=st.integers(-600, 600),
)
def test_jsonl_keeps_every_field(
    tmp_path_factory, text, keywords, grade, aspect, start, length, judgment, minutes
):
    created = datetime(2026, 1, 31, 9, 15, 0, 123456, tzinfo=UTC)
    changed = created.astimezone(timezone(timedelta(minutes=minutes)))
    record = NuggetRecord(
        line=1, qid="7", text=text, keywords=tuple(keywords), grade=grade,
        aspect=aspect, source_id="n1", docno="D1", start=start,
        end=start + length, span="x" * length, assessor="assessor-1",
        created=created, changed=changed, judgment=judgment,
    )  # fmt: skip
    path = tmp_path_factory.mktemp("w") / "bank.jsonl"
    path.write_text(nuggets_write([record]), encoding="utf-8")
    (back,) = parse_nuggets(path, "auto")
    assert back == record
    assert nuggets_write([back]) == path.read_text(encoding="utf-8")


def test_a_time_without_zone_is_refused(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_text(json.dumps({"qid": "1", "text": "a b", "created": "2026-01-01"}))
    with pytest.raises(ImportFormatError, match=r"b\.jsonl:1: field 'created'"):
        list(parse_nuggets(path))


@pytest.mark.parametrize("fmt", ["rag", "trec-qa"])
def test_trec_formats_keep_text_and_importance(shared_data, tmp_path, fmt):
    key = shared_data / "trec-qa-nuggets" / "original" / "trec12answers_definition"
    records = list(parse_nuggets(key))
    path = tmp_path / "out"
    path.write_text(nuggets_write(records, fmt), encoding="utf-8")
    back = list(parse_nuggets(path, "auto"))
    assert [(r.qid, r.text, r.grade) for r in back] == [
        (r.qid, r.text, r.grade) for r in records
    ]


def test_importance_is_vital_from_grade_two():
    assert [importance(g) for g in (None, -1, 0, 1, 2, 3)] == [
        "okay", "okay", "okay", "okay", "vital", "vital",
    ]  # fmt: skip
