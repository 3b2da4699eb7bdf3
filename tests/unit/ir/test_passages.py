"""HARD and INEX character measures: worked examples of docs/reference/algorithms.md 5 and properties."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nuggets_app.ir.passages import (
    Passage,
    articles_from_passages,
    hard_measures,
    harmonic_diff,
    inex_measures,
    magp,
    passage_stream,
)

JUDGED = {"A": [(2, 6)], "B": [(0, 6)], "C": []}
RUN = [
    Passage("A", 0, 5),
    Passage("C", 0, 3),
    Passage("B", 0, 4),
    Passage("D", 0, 2),
    Passage("A", 3, 5),
]


def test_the_stream_is_labelled_as_in_the_example():
    labels = "".join(label * n for label, n in passage_stream(RUN, JUDGED))
    assert labels == "NNRRRNNNRRRRUUDDRNN"


def test_hard_measures_equal_the_worked_example():
    at_5 = hard_measures(RUN, JUDGED, n=5)
    at_12 = hard_measures(RUN, JUDGED, n=12)
    assert at_5.relevant == 10
    assert at_5.p_at_min_n_r == pytest.approx(0.6, abs=1e-9)
    assert at_12.p_at_min_n_r == pytest.approx(0.5, abs=1e-9)
    assert at_5.r_precision == pytest.approx(0.5, abs=1e-9)
    assert at_5.bpref_at_r == pytest.approx(0.47, abs=1e-9)
    assert at_5.bpref_at_min_n_r == pytest.approx(0.36, abs=1e-9)
    assert at_5.char_ap == pytest.approx(0.3977153891859774, abs=1e-9)


@pytest.mark.parametrize(
    ("a", "length"), [(0, 5), (7, 3000), (999, 2), (5000, 123_456)]
)
def test_harmonic_differences_match_direct_sums(a, length):
    direct = math.fsum(1 / i for i in range(a + 1, a + length + 1))
    assert harmonic_diff(a, length) == pytest.approx(direct, rel=1e-13)


def test_inex_measures_equal_the_worked_example():
    highlighted = {"A": [(0, 100)], "B": [(0, 50)], "C": [(0, 200)], "D": []}
    # A returns 80 characters of which 60 are highlighted; D is not relevant; B exact.
    ranking = [("A", [(40, 120)]), ("D", [(0, 10)]), ("B", [(0, 50)])]
    scores = inex_measures(ranking, highlighted)
    assert scores.gp == pytest.approx([2 / 3, 1 / 3, 5 / 9], abs=1e-12)
    assert scores.gr == pytest.approx([1 / 3, 1 / 3, 2 / 3], abs=1e-12)
    assert scores.gr_prime == pytest.approx(
        [100 / 350, 100 / 350, 150 / 350], abs=1e-12
    )
    assert scores.agp == pytest.approx(0.4074074074074074, abs=1e-12)
    assert scores.agp_prime == pytest.approx(0.2698412698412698, abs=1e-12)
    assert magp([scores]) == pytest.approx((scores.agp, scores.agp_prime))


def test_a_topic_without_relevant_articles_is_nan_and_left_out_of_magp():
    empty = inex_measures([("A", [(0, 5)])], {"A": []})
    assert math.isnan(empty.agp)
    assert all(math.isnan(v) for v in magp([empty]))


def test_passages_are_grouped_by_article_in_order_of_first_passage():
    run = [Passage("B", 0, 2), Passage("A", 5, 1), Passage("B", 9, 3)]
    assert articles_from_passages(run) == [("B", [(0, 2), (9, 12)]), ("A", [(5, 6)])]


@st.composite
def judged_collections(draw):
    """Judged documents with relevant spans, and some non-relevant regions."""
    judged, nonrelevant = {}, []
    for i in range(draw(st.integers(1, 5))):
        docno, cursor, spans = f"doc{i}", 0, []
        for _ in range(draw(st.integers(0, 3))):
            gap = draw(st.integers(1, 20))
            length = draw(st.integers(1, 30))
            nonrelevant.append(Passage(docno, cursor, gap))
            spans.append((cursor + gap, cursor + gap + length))
            cursor += gap + length
        nonrelevant.append(Passage(docno, cursor, draw(st.integers(1, 20))))
        judged[docno] = spans
    if not any(judged.values()):
        judged["doc0"] = [(0, 7)]
        nonrelevant = [p for p in nonrelevant if p.docno != "doc0"]
    relevant = [Passage(d, a, b - a) for d, spans in judged.items() for a, b in spans]
    nonrelevant.append(Passage("unjudged", 0, draw(st.integers(1, 10))))
    order = draw(st.permutations(range(len(relevant))))
    return judged, [relevant[i] for i in order], nonrelevant


HARD_FIELDS = (
    "p_at_min_n_r",
    "r_precision",
    "bpref_at_r",
    "bpref_at_min_n_r",
    "char_ap",
)


@given(judged_collections(), st.integers(1, 200))
def test_a_perfect_run_scores_one(collection, n):
    judged, relevant, _ = collection
    scores = hard_measures(relevant, judged, n=n)
    for name in HARD_FIELDS:
        assert getattr(scores, name) == pytest.approx(1.0), name
    highlighted = {d: s for d, s in judged.items()}
    assert inex_measures(
        articles_from_passages(relevant), highlighted
    ).agp == pytest.approx(1)


@given(judged_collections(), st.integers(1, 200))
def test_reversing_a_ranking_never_helps(collection, n):
    judged, relevant, nonrelevant = collection
    run = relevant + nonrelevant
    forward = hard_measures(run, judged, n=n)
    backward = hard_measures(run[::-1], judged, n=n)
    for name in HARD_FIELDS:
        assert getattr(backward, name) <= getattr(forward, name) + 1e-12, name
    articles = articles_from_passages(relevant) + [
        (f"other{i}", [(p.start, p.start + p.length)])
        for i, p in enumerate(nonrelevant)
    ]
    inex_forward = inex_measures(articles, judged)
    inex_backward = inex_measures(articles[::-1], judged)
    assert inex_backward.agp <= inex_forward.agp + 1e-12
    assert inex_backward.agp_prime <= inex_forward.agp_prime + 1e-12


@given(judged_collections(), st.data())
def test_splitting_passages_changes_no_character_score(collection, data):
    judged, relevant, nonrelevant = collection
    run = data.draw(st.permutations(relevant + nonrelevant))
    index = data.draw(st.integers(0, len(run) - 1))
    passage = run[index]
    if passage.length < 2:
        return
    cut = data.draw(st.integers(1, passage.length - 1))
    split = [
        *run[:index],
        Passage(passage.docno, passage.start, cut),
        Passage(passage.docno, passage.start + cut, passage.length - cut),
        *run[index + 1 :],
    ]
    assert hard_measures(split, judged, n=50) == hard_measures(run, judged, n=50)
