"""Retrieval models on tiny hand-made corpora; expected values by hand or rank_bm25."""

import math

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from nuggets_app.errors import DomainError
from nuggets_app.learning import retrieval as rt
from nuggets_app.learning.run_suite import RUNS, run_suite, run_write

# Terms after analysis: d1 [appl, banana, appl], d2 [banana, cherri],
# d3 [cherri, date, elderberri, fig], d4 [grape]. N = 4, |C| = 10, avgdl = 2.5.
FRUIT = [
    ("d1", "Apple, banana and apples"),
    ("d2", "The banana; the cherry."),
    ("d3", "cherry DATE elderberry fig"),
    ("d4", "grape"),
]

SENTENCES = [
    ("s1", "the wing of the aircraft was tested in a wind tunnel at high speed"),
    ("s2", "boundary layer flow over a flat plate at high mach numbers"),
    ("s3", "heat transfer in a laminar boundary layer with suction"),
    ("s4", "the buckling of thin cylindrical shells under axial compression"),
    ("s5", "supersonic flow past a cone and the shock wave at the nose"),
    ("s6", "vibration of aircraft wings and panel flutter at supersonic speed"),
    ("s7", "an approximate theory of the compressible laminar wake"),
]


@pytest.fixture
def fruit() -> rt.InvertedIndex:
    return rt.InvertedIndex.build(FRUIT)


def _score(index: rt.InvertedIndex, scores: np.ndarray, docno: str) -> float:
    return float(scores[index.position[docno]])


def test_analyzer_casefolds_drops_stopwords_and_stems():
    assert rt.Analyzer().terms("The Runners were RUNNING, in_the rain!") == [
        "runner",
        "run",
        "rain",
    ]
    assert rt.Analyzer(stem=False).terms("The Runners") == ["runners"]


def test_index_statistics_count_terms_after_analysis(fruit):
    assert fruit.doc_len.tolist() == [3.0, 2.0, 4.0, 1.0]
    assert fruit.avgdl == 2.5
    assert fruit.df[fruit.vocab["banana"]] == 2
    assert fruit.cf[fruit.vocab["appl"]] == 2
    assert fruit.query("apples and unknownword apple") == {"appl": 2.0}


def test_duplicate_docnos_are_rejected():
    with pytest.raises(ValueError, match="duplicate docno"):
        rt.InvertedIndex.build([("a", "x"), ("a", "y")])


def test_bm25_with_lucene_idf_matches_the_hand_computation(fruit):
    scores = rt.bm25(fruit, fruit.query("apple"))
    # idf = ln(1 + 3.5/1.5); d1: tf 2, k1 (1 - b + b dl/avgdl) = 1.2 (0.25 + 0.9) = 1.38
    assert _score(fruit, scores, "d1") == pytest.approx(
        math.log(10 / 3) * 2 * 2.2 / (2 + 1.38), abs=1e-12
    )
    assert _score(fruit, scores, "d2") == 0.0


def test_bm25_with_robertson_idf_agrees_with_rank_bm25():
    index = rt.InvertedIndex.build(SENTENCES)
    tokens = [index.analyzer.terms(text) for _, text in SENTENCES]
    reference = BM25Okapi(tokens, k1=1.5, b=0.75)
    for text in ["supersonic flow", "laminar boundary layer heat", "aircraft wing"]:
        query = index.analyzer.terms(text)
        expected = reference.get_scores(query)
        ours = rt.bm25(index, index.query(text), k1=1.5, b=0.75, idf="robertson")
        np.testing.assert_allclose(ours, expected, atol=1e-12)


def test_tfidf_is_the_cosine_of_log_tf_idf_vectors(fruit):
    scores = rt.tfidf(fruit, fruit.query("banana"))
    ln2, ln4 = math.log(2), math.log(4)
    d1_norm = math.sqrt(((1 + ln2) * ln4) ** 2 + ln2**2)
    assert _score(fruit, scores, "d1") == pytest.approx(ln2 * ln2 / d1_norm, abs=1e-12)
    assert _score(fruit, scores, "d2") == pytest.approx(ln2 / math.sqrt(2), abs=1e-12)


def test_dirichlet_query_likelihood_matches_the_hand_computation(fruit):
    scores = rt.ql_dirichlet(fruit, fruit.query("banana"), mu=2.0)
    # P(banana|C) = 2/10; d1: (1 + 2·0.2)/(3 + 2); d4: (0 + 0.4)/(1 + 2)
    assert _score(fruit, scores, "d1") == pytest.approx(math.log(1.4 / 5), abs=1e-12)
    assert _score(fruit, scores, "d4") == pytest.approx(math.log(0.4 / 3), abs=1e-12)


def test_jelinek_mercer_query_likelihood_matches_the_hand_computation(fruit):
    scores = rt.ql_jelinek_mercer(fruit, fruit.query("cherry"), lam=0.5)
    assert _score(fruit, scores, "d2") == pytest.approx(math.log(0.35), abs=1e-12)
    assert _score(fruit, scores, "d1") == pytest.approx(math.log(0.1), abs=1e-12)


def test_coordination_counts_distinct_query_terms(fruit):
    scores = rt.coordination(fruit, fruit.query("banana cherry cherry"))
    assert scores.tolist() == [1.0, 2.0, 1.0, 0.0]


def test_relevance_feedback_uses_rsj_weights_and_offer_weight_expansion(fruit):
    scores = rt.relevance_feedback_bm25(
        fruit, fruit.query("banana"), ["d1"], expansion_terms=1
    )
    # R = 1. banana: r 1, n 2 -> ln(1.5·2.5 / (1.5·0.5)) = ln 5;
    # appl: r 1, n 1 -> ln(1.5·3.5 / (0.5·0.5)) = ln 21, the best offer weight.
    expected_d1 = math.log(5) * 2.2 / (1 + 1.38) + math.log(21) * 4.4 / (2 + 1.38)
    assert _score(fruit, scores, "d1") == pytest.approx(expected_d1, abs=1e-12)
    # d2: banana tf 1, dl 2 -> k1 (0.25 + 0.6) = 1.02
    assert _score(fruit, scores, "d2") == pytest.approx(
        math.log(5) * 2.2 / (1 + 1.02), abs=1e-12
    )


def test_relevance_feedback_without_relevant_documents_is_bm25(fruit):
    query = fruit.query("banana")
    np.testing.assert_array_equal(
        rt.relevance_feedback_bm25(fruit, query, ["nope"]), rt.bm25(fruit, query)
    )


def test_rm3_keeps_the_original_query_weight_and_sums_to_one():
    index = rt.InvertedIndex.build(SENTENCES)
    expanded = rt.rm3_query(index, index.query("boundary layer"), fb_docs=2, fb_terms=5)
    assert sum(expanded.values()) == pytest.approx(1.0)
    assert expanded["boundari"] >= 0.25
    assert len(expanded) <= 2 + 5


def test_rank_breaks_ties_by_docno_descending_and_respects_the_mask(fruit):
    scores = np.array([1.0, 2.0, 1.0, 1.0])
    mask = np.array([True, True, True, False])
    assert rt.rank(fruit, scores, mask=mask) == [("d2", 2.0), ("d3", 1.0), ("d1", 1.0)]
    assert rt.rank(fruit, scores, depth=2) == [("d2", 2.0), ("d4", 1.0)]


def test_run_suite_makes_at_least_twelve_valid_runs(tmp_path):
    topics = [("1", "supersonic flow"), ("2", "buckling of shells"), ("3", "zzz")]
    runs = run_suite(SENTENCES, topics, depth=3, feedback={"1": ["s5"]})
    assert len(runs) >= 12
    assert set(RUNS) | {"bm25-rf-qrels"} == set(runs)
    for tag, per_topic in runs.items():
        assert "3" not in per_topic, tag
        for ranking in per_topic.values():
            docnos = [d for d, _ in ranking]
            assert len(docnos) == len(set(docnos)) <= 3
            assert [s for _, s in ranking] == sorted(
                (s for _, s in ranking), reverse=True
            )
    path = tmp_path / "bm25.run"
    lines = run_write(str(path), "bm25", runs["bm25"])
    rows = [line.split() for line in path.read_text().splitlines()]
    assert len(rows) == lines
    assert rows[0][:2] == ["1", "Q0"]
    assert rows[0][3] == "1"
    assert rows[0][5] == "bm25"


def test_run_suite_rejects_unknown_tags():
    with pytest.raises(DomainError, match="unknown run tags: nope"):
        run_suite(SENTENCES, [("1", "flow")], tags=["nope"])
