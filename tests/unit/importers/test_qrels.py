"""qrels and prels files."""

import pytest

from nuggets_app.importers import ImportFormatError, QrelsLine, parse_qrels
from nuggets_app.importers.qrels import detect_kind


def test_cranfield_qrels_have_the_readme_counts(shared_data):
    lines = list(parse_qrels(shared_data / "cranfield" / "qrels.txt"))
    assert len(lines) == 1837
    grades = {}
    for line in lines:
        grades[line.rel] = grades.get(line.rel, 0) + 1
    assert grades == {5: 225, 4: 128, 3: 387, 2: 734, 1: 363}
    assert all(line.method is None and line.inclusion_prob is None for line in lines)


def test_web09_prels_have_the_readme_counts(shared_data):
    path = shared_data / "trec-web09-prels" / "prels.web.1-50.txt.gz"
    assert detect_kind(path) == "prels"
    lines = list(parse_qrels(path))
    assert len(lines) == 13118
    assert len({line.qid for line in lines}) == 50
    rels = [line.rel for line in lines]
    assert (rels.count(0), rels.count(1), rels.count(2)) == (9116, 2514, 1488)
    method0 = [line for line in lines if line.method == 0]
    assert len(method0) == 2452
    assert all(line.inclusion_prob == 1.0 for line in method0)
    below_one = [line for line in lines if line.method == 1 and line.inclusion_prob < 1]
    assert len(below_one) == 2498


def test_na_probability_and_placeholder_rows(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("1 d1 1 NA NA\n1 d2 -999 1 0\n")
    assert list(parse_qrels(path, "prels")) == [
        QrelsLine(1, "1", "d1", 1, None, None),
        QrelsLine(2, "1", "d2", -999, 1, 0.0),
    ]


def test_identical_repeated_lines_are_read_once(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("1 0 d1 1\n1 0 d1 1\n")
    assert len(list(parse_qrels(path))) == 1


def test_trec_eval_comment_lines_are_skipped(shared_data):
    plain = list(parse_qrels(shared_data / "trec_eval-tests" / "qrels.test"))
    commented = list(
        parse_qrels(shared_data / "trec_eval-tests" / "qrels.test.with-comments")
    )
    # Only whole lines starting with '#' are comments: 'CR#93E-1860' stays a docno, as
    # trec_eval reads it (its expected output is the same for both files).
    assert len(plain) == len(commented)
    differing = [
        (a.docno, b.docno) for a, b in zip(plain, commented, strict=True) if a != b
    ]
    assert [pair for pair in differing if pair[0] != pair[1]] == [
        ("CR93E-1860", "CR#93E-1860")
    ]


def test_an_explicit_kind_overrides_detection(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("1 0 d1 1\n")
    with pytest.raises(ImportFormatError, match="wrong number of columns for prels"):
        list(parse_qrels(path, "prels"))


def test_subtopic_qrels_are_read_only_when_asked_for(tmp_path):
    path = tmp_path / "div.txt"
    path.write_text("1 s1 d1 1\n1 s2 d1 2\n1 s1 d1 1\n2 3 d2 0\n")
    # Four columns read as plain qrels unless the kind says subtopics; as plain qrels
    # the two subtopics of d1 are two judgments of one document that disagree.
    assert detect_kind(path) == "qrels"
    with pytest.raises(ImportFormatError, match=":2: conflicting judgments"):
        list(parse_qrels(path))
    assert list(parse_qrels(path, "subtopics")) == [
        QrelsLine(1, "1", "d1", 1, None, None, None, "s1"),
        QrelsLine(2, "1", "d1", 2, None, None, None, "s2"),
        QrelsLine(4, "2", "d2", 0, None, None, None, "3"),
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("1 s1 d1 1\n1 0 d2 1\n", r":2: ambiguous subtopic '0'"),
        ("1 s1 d1 1\n1 Q0 d2 1\n", r":2: ambiguous subtopic 'Q0'"),
        ("1 s1 d1 1\n1 s1 d1 2\n", r":2: conflicting judgments for qid '1', subtopic"),
        ("1 s1 d1 1\n1 s1 d1\n", r":2: wrong number of columns for subtopics: 3"),
        ("1 s1 d1 1\n1 s1 d1 x\n", r":2: .*relevance"),
    ],
)
def test_bad_subtopic_lines_are_named_with_file_and_line(tmp_path, text, problem):
    path = tmp_path / "div.txt"
    path.write_text(text)
    with pytest.raises(ImportFormatError, match=problem) as info:
        list(parse_qrels(path, "subtopics"))
    assert str(info.value).startswith(f"{path}:2:")
