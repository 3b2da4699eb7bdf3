"""Run files: parsing, and trec_eval's ordering."""

import gzip
import itertools

import pytest

from nuggets_app.importers import ImportFormatError, RunLine, parse_run, rank_by_score


def test_it_reads_a_real_run_with_crlf_tabs_and_comments(tmp_path):
    path = tmp_path / "r.run"
    path.write_bytes(
        b"# comment\r\n1\tQ0\td1\t1\t2.5\tbm25\r\n\r\n1 Q0 d2 2 -1e-3 bm25\r\n"
    )
    assert list(parse_run(path)) == [
        RunLine(2, "1", "d1", 1, 2.5, "bm25"),
        RunLine(4, "1", "d2", 2, -0.001, "bm25"),
    ]


def test_it_reads_gzip_by_extension(tmp_path):
    path = tmp_path / "r.run.gz"
    path.write_bytes(gzip.compress(b"7 Q0 doc 0 1 t\n"))
    assert list(parse_run(path)) == [RunLine(1, "7", "doc", 0, 1.0, "t")]


def test_trec_eval_test_run_has_its_documented_size(shared_data):
    # results.test is trec_eval's own test run: 3 topics, 1000 documents per topic
    # except where the file says otherwise; the line count is wc -l's.
    path = shared_data / "trec_eval-tests" / "results.test"
    expected = path.read_bytes().count(b"\n")
    lines = list(parse_run(path))
    assert len(lines) == expected
    assert {line.tag for line in lines} == {lines[0].tag}


def test_rank_by_score_orders_by_score_then_docno_descending():
    lines = [
        RunLine(1, "q", "a", 1, 1.0, "t"),
        RunLine(2, "q", "c", 2, 2.0, "t"),
        RunLine(3, "q", "b", 3, 1.0, "t"),
        RunLine(4, "p", "z", 9, 0.5, "t"),
        RunLine(5, "q", "B", 4, 1.0, "t"),
    ]
    ranked = rank_by_score(lines)
    assert [(r.qid, r.docno, r.rank) for r in ranked] == [
        ("q", "c", 1),
        ("q", "b", 2),
        ("q", "a", 3),
        ("q", "B", 4),
        ("p", "z", 1),
    ]


def test_rank_by_score_agrees_with_trec_eval_ordering_vector(shared_data):
    # trec_eval orders a topic's documents by score, ties by docno descending
    # (docs/reference/algorithms.md section 0); results.test has ties, so check the rule directly.
    lines = list(parse_run(shared_data / "trec_eval-tests" / "results.test"))
    ranked = rank_by_score(lines)
    for before, after in itertools.pairwise(ranked):
        if before.qid == after.qid:
            assert (before.score, before.docno) > (after.score, after.docno)
            assert after.rank == before.rank + 1


@pytest.mark.parametrize("score", ["1e5", "-2", "+3.", ".5", "0.000"])
def test_plain_ascii_numbers_are_scores(tmp_path, score):
    path = tmp_path / "r.run"
    path.write_text(f"1 Q0 d {1} {score} t\n")
    assert next(iter(parse_run(path))).score == float(score)


@pytest.mark.parametrize(
    "score", ["NaN", "-inf", "Infinity", "1_0", "\uff11", "0x10", "1e"]
)
def test_lenient_python_numbers_are_refused(tmp_path, score):
    path = tmp_path / "r.run"
    path.write_text(f"1 Q0 d 1 {score} t\n")
    with pytest.raises(ImportFormatError, match=":1: score"):
        list(parse_run(path))
