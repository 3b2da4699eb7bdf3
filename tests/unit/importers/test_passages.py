"""The passage files of the character measures, read by the importers only."""

import pytest

from nuggets_app.importers.errors import ImportFormatError
from nuggets_app.importers.passages import (
    passage_qrels_lines,
    read_doc_lengths,
    read_passage_run,
)

LENGTHS = {"A": 10, "B": 8}


def test_zero_length_lines_mark_judged_documents_without_relevant_text():
    judged = passage_qrels_lines(["1 A 2 4", "1 B 0 0", ""], LENGTHS, source="p.qrels")
    assert judged == {"1": {"A": [(2, 6)], "B": []}}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("1 A 2", "a passage qrels line needs 4 columns, got 3"),
        ("1 A x 4", "start and length must be integers >= 0"),
        ("1 C 0 1", "unknown document C"),
        ("1 A 8 4", "span 8\\+4 ends past the end of document A \\(10 characters\\)"),
    ],
)
def test_a_bad_qrels_line_names_file_line_and_problem(line, problem):
    with pytest.raises(ImportFormatError, match=f"p.qrels:2: {problem}"):
        passage_qrels_lines(["1 A 0 1", line], LENGTHS, source="p.qrels")


def test_a_run_is_ranked_by_score_then_rank(tmp_path):
    path = tmp_path / "r.run"
    path.write_text("1 A 0 2 2 0.5 tag\n1 B 0 3 1 0.9 tag\n1 A 5 2 1 0.5 tag\n")
    run = read_passage_run(str(path), LENGTHS)
    assert run.name == "tag"
    assert [(p.docno, p.start) for p in run.passages["1"]] == [
        ("B", 0),
        ("A", 5),
        ("A", 0),
    ]


def test_document_lengths_come_from_text_or_length(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"docno": "A", "text": "abc"}\n{"docno": "B", "length": 7}\n')
    assert read_doc_lengths(str(path)) == {"A": 3, "B": 7}
    path.write_text('{"docno": "A"}\n')
    with pytest.raises(ImportFormatError, match=r"docs\.jsonl:1: expected JSON"):
        read_doc_lengths(str(path))
