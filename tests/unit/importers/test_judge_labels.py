"""An automatic judge's labels files: qrels, scores, runs, JSONL and CSV."""

import gzip
from pathlib import Path

import pytest

from nuggets_app.importers import ImportFormatError
from nuggets_app.importers.errors import ErrorSink, ImportOptionError
from nuggets_app.importers.judge_labels import (
    JudgeLabelLine,
    detect_format,
    parse_judge_labels,
)

# The LLMJudge excerpt (its README): four topics, 420 pairs, three judges.
LLMJUDGE = Path(__file__).resolve().parents[2] / "data" / "llmjudge"


def _file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_llmjudge_qrels_read_as_graded_labels():
    path = LLMJUDGE / "judges" / "h2oloo-fewself.qrels"
    assert detect_format(path) == "qrels"
    lines = list(parse_judge_labels(path))
    assert len(lines) == 420
    assert {line.qid for line in lines} == {"q0", "q1", "q32", "q38"}
    assert {line.grade for line in lines} <= {0, 1, 2, 3}
    assert all(line.score is None and line.probabilities is None for line in lines)


def test_binary_qrels_and_the_line_numbers_of_a_file_with_comments(tmp_path):
    path = _file(tmp_path, "j.qrels", "# a judge\n1 0 d1 1\n\n1 0 d2 0\n")
    assert list(parse_judge_labels(path)) == [
        JudgeLabelLine(2, "1", "d1", grade=1),
        JudgeLabelLine(4, "1", "d2", grade=0),
    ]


def test_score_files_and_runs_keep_the_score(tmp_path):
    scores = _file(tmp_path, "s.txt", "1 Q0 d1 0.92\n1 Q0 d2 -3.5e-1\n")
    run = _file(tmp_path, "r.txt", "1 Q0 d1 1 7.25 umbrela\n1 Q0 d2 2 3 umbrela\n")
    assert detect_format(scores) == "scores"
    assert detect_format(run) == "run"
    assert [(x.docno, x.score) for x in parse_judge_labels(scores)] == [
        ("d1", 0.92),
        ("d2", -0.35),
    ]
    assert [(x.docno, x.score) for x in parse_judge_labels(run)] == [
        ("d1", 7.25),
        ("d2", 3.0),
    ]


def test_integer_scores_need_the_scores_format(tmp_path):
    path = _file(tmp_path, "s.txt", "1 Q0 d1 3\n")
    assert detect_format(path) == "qrels"
    assert next(parse_judge_labels(path, "scores")).score == 3.0


def test_jsonl_probabilities_per_grade_and_of_yes(tmp_path):
    graded = _file(
        tmp_path,
        "g.jsonl",
        '{"qid": "1", "docno": "d1", "prob_0": 0.1, "prob_1": 0.2, "prob_2": 0.7}\n'
        '{"qid": 1, "docid": "d2", "prob_2": 0, "prob_1": 0.5, "prob_0": 0.5}\n',
    )
    yes = _file(tmp_path, "y.jsonl", '{"qid": "1", "docno": "d1", "prob_yes": 0.8}\n')
    assert list(parse_judge_labels(graded)) == [
        JudgeLabelLine(1, "1", "d1", probabilities={"0": 0.1, "1": 0.2, "2": 0.7}),
        JudgeLabelLine(2, "1", "d2", probabilities={"0": 0.5, "1": 0.5, "2": 0.0}),
    ]
    assert next(parse_judge_labels(yes)).probabilities == {"yes": 0.8}


def test_csv_probabilities_with_a_header_gzipped(tmp_path):
    path = tmp_path / "j.csv.gz"
    with gzip.open(path, "wt") as handle:
        handle.write("qid,docno,prob_0,prob_1\n1,d1,0.25,0.75\n2,d9,1,0\n")
    assert detect_format(path) == "csv"
    assert list(parse_judge_labels(path)) == [
        JudgeLabelLine(2, "1", "d1", probabilities={"0": 0.25, "1": 0.75}),
        JudgeLabelLine(3, "2", "d9", probabilities={"0": 1.0, "1": 0.0}),
    ]


def test_a_csv_without_its_header_is_a_format_with_a_comma(tmp_path):
    path = _file(tmp_path, "j.txt", "1,d1,0.5\n")
    assert detect_format(path) == "csv"
    with pytest.raises(ImportFormatError, match=r"j.txt:1: the header does not name"):
        list(parse_judge_labels(path))


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.qrels", "1 0 d1 2\n1 0 d2 x\n", r"a.qrels:2: grade is not an integer"),
        ("b.qrels", "1 0 d1 2\n1 0 d2\n", r"b.qrels:2: wrong number of columns"),
        ("c.txt", "1 Q0 d1 0.5\n1 Q0 d2 nan\n", r"c.txt:2: score is not a finite"),
        (
            "d.qrels",
            "1 0 d1 2\n1 0 d1 2\n1 0 d1 1\n",
            r"d.qrels:3: conflicting labels for qid '1', docno 'd1'",
        ),
        (
            "e.jsonl",
            '{"qid": "1", "docno": "d1", "prob_0": 0.5, "prob_1": 0.6}\n',
            r"e.jsonl:1: probabilities of the grades do not sum to 1",
        ),
        (
            "f.jsonl",
            '{"qid": "1", "docno": "d1", "prob_yes": 0.5}\n'
            '{"qid": "1", "docno": "d2", "prob_yes": 1.5}\n',
            r"f.jsonl:2: prob_yes outside \[0, 1\]",
        ),
        (
            "g.jsonl",
            '{"qid": "1", "docno": "d1", "prob_yes": 0.5}\n'
            '{"qid": "1", "docno": "d2", "prob_0": 0.5, "prob_1": 0.5}\n',
            r"g.jsonl:2: probability fields differ from the first record's",
        ),
        (
            "h.jsonl",
            '{"qid": "1", "docno": "d1", "prob_0": 0.5, "prob_2": 0.5}\n',
            r"h.jsonl:1: probability fields skip a grade",
        ),
        ("i.jsonl", '{"qid": "1", "docno": "d1"}\n', r"i.jsonl:1: no probability"),
        (
            "j.jsonl",
            '{"qid": "1", "prob_yes": 1}\n',
            r'j.jsonl:1: missing field "docno"',
        ),
        (
            "k.csv",
            "qid,docno,prob_yes\n1,d1,0.5\n1,d2\n",
            r"k.csv:3: wrong number of fields: 2",
        ),
        ("l.txt", "1 d1 2\n", r"l.txt:1: cannot tell the format: 3 columns"),
        ("m.txt", "# nothing\n", r"m.txt:1: empty file: no labels"),
    ],
)
def test_a_bad_line_is_named_with_its_file_and_line(tmp_path, name, text, message):
    path = _file(tmp_path, name, text)
    with pytest.raises(ImportFormatError, match=message):
        list(parse_judge_labels(path))


def test_several_bad_lines_are_reported_together_with_a_sink(tmp_path):
    path = _file(tmp_path, "j.qrels", "1 0 d1 x\n1 0 d2 1\n1 0 d3 y\n")
    sink = ErrorSink(limit=10)
    good = list(parse_judge_labels(path, sink=sink))
    assert [line.docno for line in good] == ["d2"]
    assert [error.line for error in sink.errors] == [1, 3]


def test_an_unknown_format_is_refused_before_reading():
    with pytest.raises(ImportOptionError, match="format must be one of"):
        list(parse_judge_labels("missing.txt", "tsv"))
