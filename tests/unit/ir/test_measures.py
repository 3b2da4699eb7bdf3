"""Standard measures through ir_measures against trec_eval's own outputs (3.4, test/)."""

import math

import ir_measures
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nuggets_app.errors import DomainError
from nuggets_app.ir.measures import (
    DEFAULT_MEASURES,
    average_precision,
    run_evaluate,
    scored_ranking_ap,
    scored_ranking_map,
)

QRELS_34 = {"q1": {"d1": 1, "d2": 0, "d3": -1, "d4": 1, "d5": 0, "d6": 1}}
TREC_EVAL_NAMES = {
    "AP": "map",
    "Rprec": "Rprec",
    "Bpref": "bpref",
    "P@5": "P_5",
    "P@10": "P_10",
    "infAP": "infAP",
    "nDCG": "ndcg",
    "nDCG@10": "ndcg_cut_10",
}


def ranked(*docnos: str) -> dict[str, dict[str, float]]:
    return {"q1": {d: float(len(docnos) - i) for i, d in enumerate(docnos)}}


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        (
            ranked("d1", "d2", "d3", "d7", "d4", "d5"),
            (0.5, 0.5, 0.4666666666666666, 0.4),
        ),
        (
            ranked("d2", "d3", "d1", "d7", "d4"),
            (0.2777799999555564, 0.3333333333333333, 0.24444444444444446, 0.4),
        ),
    ],
)
def test_infap_and_bpref_equal_the_test_vector(run, expected):
    result = run_evaluate(QRELS_34, run, measures=["infAP", "Bpref", "AP", "P@5"])
    values = tuple(result.per_topic["q1"][m] for m in ("infAP", "Bpref", "AP", "P@5"))
    assert values == pytest.approx(expected, abs=1e-9)


def read_qrels(path):
    qrels: dict[str, dict[str, int]] = {}
    for text in path.read_text().splitlines():
        qid, _iter, docno, rel = text.split()
        qrels.setdefault(qid, {})[docno] = int(rel)
    return qrels


def read_run(path):
    run: dict[str, dict[str, float]] = {}
    for text in path.read_text().splitlines():
        qid, _q0, docno, _rank, score, _tag = text.split()
        run.setdefault(qid, {})[docno] = float(score)
    return run


def read_trec_eval_output(path):
    values = {}
    for text in path.read_text().splitlines():
        name, qid, value = (part.strip() for part in text.split("\t"))
        values[name, qid] = value
    return values


def test_measures_equal_trec_evals_printed_values_on_its_test_files(shared_data):
    folder = shared_data / "trec_eval-tests"
    qrels, run = read_qrels(folder / "qrels.test"), read_run(folder / "results.test")
    expected = read_trec_eval_output(folder / "out.test.aq")
    result = run_evaluate(qrels, run, measures=list(TREC_EVAL_NAMES))
    assert sorted(result.per_topic) == ["301", "302", "303"]
    for name, trec_name in TREC_EVAL_NAMES.items():
        for qid in ("301", "302", "303"):
            assert f"{result.per_topic[qid][name]:.4f}" == expected[trec_name, qid]
        assert f"{result.mean[name]:.4f}" == expected[trec_name, "all"]


def test_values_are_ir_measures_own(shared_data):
    folder = shared_data / "trec_eval-tests"
    qrels, run = read_qrels(folder / "qrels.test"), read_run(folder / "results.test")
    result = run_evaluate(qrels, run)
    measures = [ir_measures.parse_measure(m) for m in DEFAULT_MEASURES]
    for metric in ir_measures.iter_calc(measures, qrels, run):
        assert result.per_topic[metric.query_id][str(metric.measure)] == metric.value
    rows = list(result.rows())
    assert rows[-len(DEFAULT_MEASURES) :] == [
        (m, "all", result.mean[m]) for m in DEFAULT_MEASURES
    ]


def test_an_unknown_measure_is_named():
    with pytest.raises(
        DomainError, match='unknown measure "Nope@3": a measure is an ir_measures name'
    ):
        run_evaluate(QRELS_34, ranked("d1"), measures=["Nope@3"])


def test_matcher_ap_ranks_only_labelled_documents():
    labels = {"a": 1, "b": 0, "c": 1, "d": 0}
    scores = {"e": 0.95, "a": 0.9, "b": 0.8, "c": 0.7, "d": 0.1}
    assert scored_ranking_ap(scores, labels) == pytest.approx((1 + 2 / 3) / 2)


def test_a_relevant_document_without_score_counts_as_missed():
    assert scored_ranking_ap({"a": 1.0}, {"a": 1, "z": 1}) == pytest.approx(0.5)
    assert math.isnan(scored_ranking_ap({"a": 1.0}, {"a": 0}))


def test_matcher_map_averages_topics_with_relevant_labels():
    per_topic, mean = scored_ranking_map(
        {"1": {"a": 2.0, "b": 1.0}, "2": {"c": 1.0}},
        {"1": {"a": 0, "b": 1}, "2": {"c": 1}, "3": {"x": 0}},
    )
    assert per_topic["1"] == pytest.approx(0.5)
    assert per_topic["2"] == pytest.approx(1.0)
    assert math.isnan(per_topic["3"])
    assert mean == pytest.approx(0.75)


@given(
    st.dictionaries(
        st.sampled_from("abcdefgh"),
        st.tuples(st.integers(0, 1), st.integers(0, 50) | st.none()),
        min_size=1,
    )
)
def test_matcher_ap_equals_ir_measures_ap(docs):
    labels = {d: rel for d, (rel, _s) in docs.items()}
    scores = {d: float(s) for d, (_rel, s) in docs.items() if s is not None}
    ours = scored_ranking_ap(scores, labels)
    if not any(labels.values()):
        assert math.isnan(ours)
        return
    run = {"q": scores} if scores else {"q": {}}
    theirs = ir_measures.calc_aggregate([ir_measures.AP], {"q": labels}, run)
    assert ours == pytest.approx(theirs.get(ir_measures.AP, 0.0), abs=1e-12)


def test_average_precision_matches_the_specification_vector():
    # docs/reference/algorithms.md 3.4: relevant d1 d4 d6; run d1 d2 d3 d7 d4 d5 -> AP 0.4666666666666666
    ranking = ["d1", "d2", "d3", "d7", "d4", "d5"]
    assert average_precision(ranking, {"d1", "d4", "d6"}) == pytest.approx(
        0.4666666666666666, abs=1e-12
    )
    assert average_precision(ranking, set()) == 0.0
    # The same ranking through the scored form: only labelled documents are ranked.
    scores = {d: -i for i, d in enumerate(ranking)}
    labels = {d: int(d in {"d1", "d4", "d6"}) for d in ranking} | {"d6": 1}
    assert scored_ranking_ap(scores, labels) == pytest.approx(0.4666666666666666)
