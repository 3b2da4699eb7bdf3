"""Subtopic qrels lines and the diversity measures on a hand-made case: alpha-nDCG and
subtopic recall computed by hand, every measure equal to ir_measures called directly."""

from __future__ import annotations

import math

import ir_measures
import pytest

from nuggets_app.importers.errors import ImportFormatError
from nuggets_app.importers.qrels import parse_qrels_text, subtopic_qrels_read
from nuggets_app.ir.diversity import (
    DiversityError,
    diversity_evaluate,
    subtopic_qrels_lines,
)

# Topic 7: document a covers subtopic 1, b covers 2, c covers both; d covers nothing.
# Topic 12: one subtopic, document x.
QRELS = {
    "7": {"1": {"a": 1, "c": 1, "d": 0}, "2": {"b": 1, "c": 1}},
    "12": {"1": {"x": 1}},
}
RUN = {"7": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5}, "12": {"y": 2.0, "x": 1.0}}


def subtopic_qrels_parse(lines, source="<qrels>"):
    return subtopic_qrels_read(parse_qrels_text(lines, "subtopics", source=source))


def test_lines_round_trip_through_the_importers_parser():
    lines = subtopic_qrels_lines(QRELS)
    assert lines[0] == "7 1 a 1"
    assert lines[-1] == "12 1 x 1"
    assert subtopic_qrels_parse(lines) == QRELS


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("7 1 a", "wrong number of columns for subtopics"),
        ("7 1 a yes", "relevance"),
        ("7 1 a 2", "conflicting judgments for qid '7', subtopic '1', docno 'a'"),
    ],
)
def test_bad_lines_name_source_line_and_problem(line, message):
    with pytest.raises(ImportFormatError, match=message) as info:
        subtopic_qrels_parse(["7 1 a 1", line], source="q.txt")
    assert "q.txt:2" in str(info.value)


def test_a_repeated_identical_line_is_read_once():
    assert subtopic_qrels_parse(["7 1 a 1", "7 1 a 1"]) == {"7": {"1": {"a": 1}}}


def test_measures_by_hand_and_against_ir_measures():
    result = diversity_evaluate(QRELS, RUN, k=3)
    # alpha-nDCG@3, alpha 0.5, topic 7. Run a, b, c: gains 1, 1, 0.5 + 0.5 (both
    # subtopics seen once). Ideal (greedy): c (2), a (0.5), b (0.5).
    dcg = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    ideal = 2 / math.log2(2) + 0.5 / math.log2(3) + 0.5 / math.log2(4)
    assert result.per_topic["7"]["alpha_nDCG@3"] == pytest.approx(dcg / ideal)
    # Subtopic recall@1: a covers one of topic 7's two subtopics.
    assert diversity_evaluate(QRELS, RUN, k=1).per_topic["7"]["StRecall@1"] == 0.5
    assert result.per_topic["12"]["StRecall@3"] == 1.0
    q = [
        ir_measures.Qrel(qid, d, g, s)
        for qid, subs in QRELS.items()
        for s, docs in subs.items()
        for d, g in docs.items()
    ]
    r = [
        ir_measures.ScoredDoc(qid, d, v)
        for qid, docs in RUN.items()
        for d, v in docs.items()
    ]
    measures = [
        ir_measures.alpha_nDCG @ 3,
        ir_measures.ERR_IA @ 3,
        ir_measures.StRecall @ 3,
    ]
    direct = ir_measures.calc_aggregate(measures, q, r)
    assert result.mean == pytest.approx({str(m): v for m, v in direct.items()})
    with pytest.raises(DiversityError, match="k must be"):
        diversity_evaluate(QRELS, RUN, k=0)
