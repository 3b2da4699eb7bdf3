"""Nugget files: the project's JSONL, TREC QA keys, TREC RAG 2025, TREC TS nuggets.

Counts are the data READMEs' (trec-qa-nuggets, trec-rag25-nuggets, trec-ts-nuggets).
"""

import gzip
import json
from collections import Counter

import pytest

from nuggets_app.importers.errors import ErrorSink, ImportFormatError
from nuggets_app.importers.nuggets import detect_format, parse_nuggets


def test_trec_qa_2003_definition_key_has_207_vital_and_210_okay(shared_data):
    path = shared_data / "trec-qa-nuggets" / "original" / "trec12answers_definition"
    records = list(parse_nuggets(path))
    assert detect_format(path) == "trec-qa"
    assert len({r.qid for r in records}) == 50
    assert Counter(r.grade for r in records) == {2: 207, 1: 210}
    first = records[0]
    assert (first.qid, first.source_id, first.text) == (
        "1901",
        "1",
        "american composer",
    )
    assert first.topic_text == "Who is Aaron Copland?"
    assert first.line == 2


def test_trec_qa_pyramid_file_gives_ungraded_nuggets(shared_data):
    path = shared_data / "trec-qa-nuggets" / "original" / "trec15answers_other_pyramid"
    records = list(parse_nuggets(path))
    assert detect_format(path) == "trec-qa"
    assert len(records) == 254 + 421
    assert {r.grade for r in records} == {None}


def test_rag25_nuggets_carry_grades_and_aspects_without_quotes(shared_data):
    path = shared_data / "trec-rag25-nuggets" / "rag25-dev-nuggets.jsonl"
    records = list(parse_nuggets(path))
    assert detect_format(path) == "rag"
    assert len(records) == 1255
    assert len({r.qid for r in records}) == 22
    assert Counter(r.grade for r in records) == {2: 925, 1: 330}
    first = json.loads(path.read_text().splitlines()[0])
    raw = first["nuggets"][0]["mapped_sub_narrative"]
    assert raw.startswith('"')
    assert records[0].aspect == raw.strip('"')
    assert not any(r.aspect.startswith('"') for r in records)


@pytest.mark.parametrize(
    ("year", "grades"),
    [(2013, {3: 279, 2: 468, 1: 588, -1: 5}), (2014, {3: 320, 2: 386, 1: 688})],
)
def test_trec_ts_track_tsv_gives_importance_as_grade(shared_data, year, grades):
    path = shared_data / "trec-ts-nuggets" / "original" / str(year) / "nuggets.tsv.gz"
    records = list(parse_nuggets(path))
    assert detect_format(path) == "trec-ts"
    assert Counter(r.grade for r in records) == grades
    assert all(r.source_id.startswith(f"VMTS{year % 100}.") for r in records)


def test_trec_ts_jsonl_agrees_with_the_track_tsv(shared_data):
    folder = shared_data / "trec-ts-nuggets"
    jsonl = list(parse_nuggets(folder / "nuggets.jsonl"))
    tsv = {
        (r.qid, r.source_id): r
        for r in parse_nuggets(folder / "original" / "2014" / "nuggets.tsv.gz")
    }
    assert jsonl
    for record in jsonl:
        if record.qid.startswith("TS14."):
            other = tsv[(record.qid, record.source_id)]
            assert (record.text, record.grade) == (other.text, other.grade)


def test_own_jsonl_reads_offsets_keywords_and_aspect(tmp_path):
    path = tmp_path / "bank.jsonl"
    path.write_text(
        '{"qid": "7", "text": "wing flutter", "keywords": ["flutter", " "], '
        '"grade": 2, "aspect": "a1", "id": "n1", "docno": "d1", "start": 3, '
        '"end": 9}\n\n{"qid": "7", "text": "no source"}\n'
    )
    first, second = parse_nuggets(path)
    assert detect_format(path) == "jsonl"
    assert (first.line, first.keywords, first.grade, first.aspect) == (
        1,
        ("flutter",),
        2,
        "a1",
    )
    assert (first.docno, first.start, first.end, first.source_id) == ("d1", 3, 9, "n1")
    assert (second.line, second.docno, second.start) == (3, None, None)


@pytest.mark.parametrize(
    ("content", "line", "problem"),
    [
        ('{"qid": "1", "text": "a"}\n{"qid": "1", "text": " "}\n', 2, "empty nugget"),
        ('{"qid": "1", "text": "a", "docno": "d", "start": 1}\n', 1, "go together"),
        (
            '{"qid": "1", "text": "a", "docno": "d", "start": 5, "end": 5}\n',
            1,
            "bad offsets",
        ),
        ('{"qid": "1", "text": "a", "grade": "2"}\n', 1, "not an integer"),
        # Fields quoted as the topic importer quotes them, types named as JSON names
        # them.
        (
            '{"qid": "1", "text": 5}\n',
            1,
            "field \"text\" is not a string (got 'number')",
        ),
        ('{"qid": "1"}\n', 1, 'missing field "text"'),
        ('{"qid": "1", "text": "a", "keywords": 3}\n', 1, 'field "keywords" is not'),
        ('{"qid": "1", "text": "a"}\n{"qid": "1", "text": "a"\n', 2, "invalid JSON"),
        ("Qid 3: who?\n3 1\tvital\tfine\n3 2\tcrucial\tbad\n", 3, "bad nugget label"),
        ("Qid 3: who?\n3 1\tvital\n", 2, "not a nugget line"),
    ],
)
def test_a_bad_line_is_named_with_file_and_line(tmp_path, content, line, problem):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content.encode())
    with pytest.raises(ImportFormatError) as error:
        list(parse_nuggets(path))
    assert error.value.line == line
    assert problem in str(error.value)
    assert str(error.value).startswith(f"{path}:{line}:")


def test_rag_and_ts_bad_lines(tmp_path):
    rag = tmp_path / "rag.jsonl"
    rag.write_text(
        '{"qid": "5", "nuggets": [{"text": "x", "importance": "vital"}]}\n'
        '{"qid": "6", "nuggets": [{"text": "y", "importance": "high"}]}\n'
    )
    with pytest.raises(
        ImportFormatError, match=r"rag.jsonl:2: nugget 1: bad importance"
    ):
        list(parse_nuggets(rag))
    ts = tmp_path / "ts.tsv.gz"
    with gzip.open(ts, "wt") as out:
        out.write(
            "query_id\tnugget_id\ttimestamp\timportance\tnugget_len\tnugget_text\n"
        )
        out.write("TS1\tN1\t1\t3\t2\tsome fact\n")
        out.write("TS1\tN2\t1\tthree\t2\tother fact\n")
    with pytest.raises(ImportFormatError, match=r"ts.tsv.gz:3: importance is not"):
        list(parse_nuggets(ts))


def test_a_sink_collects_several_bad_lines(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"qid": "1"}\n{"qid": "1", "text": "ok"}\n{"text": "no qid"}\n')
    sink = ErrorSink(limit=5)
    good = list(parse_nuggets(path, "jsonl", sink=sink))
    assert [r.line for r in good] == [2]
    assert [e.line for e in sink.errors] == [1, 3]


def test_an_unknown_shape_and_an_empty_file_are_refused(tmp_path):
    odd = tmp_path / "odd.txt"
    odd.write_text("hello world\n")
    with pytest.raises(ImportFormatError, match="cannot tell the nugget format"):
        list(parse_nuggets(odd))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(ImportFormatError, match="empty file"):
        list(parse_nuggets(empty))
