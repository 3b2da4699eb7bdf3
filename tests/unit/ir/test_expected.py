"""Expected measures against brute force over Bernoulli labels, and against ir_measures
when the probabilities are 0 or 1."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nuggets_app.errors import DomainError
from nuggets_app.ir.expected import (
    expected_ap,
    expected_ndcg,
    expected_precision,
    labels_merge,
    qrels_probabilities,
    run_expected,
)
from nuggets_app.ir.measures import run_evaluate

probabilities = st.lists(st.floats(0, 1), min_size=1, max_size=7)


def _outcomes(probs):
    """Every labelling of the documents with its probability."""
    for labels in itertools.product((0, 1), repeat=len(probs)):
        weight = math.prod(
            p if r else 1 - p for p, r in zip(probs, labels, strict=True)
        )
        yield labels, weight


@settings(max_examples=200, deadline=None)
@given(probabilities, st.integers(0, 3))
def test_eap_is_the_expected_ap_numerator_over_the_expected_r(probs, unretrieved):
    """EAP = E[Σ_k rel_k prec@k] / E[R], both sides by enumeration; unretrieved
    documents count in R only."""
    retrieved = probs[: len(probs) - min(unretrieved, len(probs) - 1)]
    ranking = [f"d{i}" for i in range(len(retrieved))]
    qrels = {f"d{i}": p for i, p in enumerate(probs)}
    numerator = expected_r = 0.0
    for labels, weight in _outcomes(probs):
        found = 0
        for k, rel in enumerate(labels[: len(retrieved)], start=1):
            found += rel
            numerator += weight * rel * found / k
        expected_r += weight * sum(labels)
    value = expected_ap(ranking, qrels)
    if expected_r == 0:
        assert math.isnan(value)
    else:
        assert value == pytest.approx(numerator / expected_r, rel=1e-9, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(probabilities, st.integers(1, 8))
def test_expected_precision_is_the_mean_precision(probs, k):
    ranking = [f"d{i}" for i in range(len(probs))]
    qrels = dict(zip(ranking, probs, strict=True))
    brute = sum(w * sum(labels[:k]) / k for labels, w in _outcomes(probs))
    assert expected_precision(ranking, qrels, k) == pytest.approx(brute, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.booleans(), min_size=2, max_size=12), st.randoms())
def test_with_certain_labels_the_expected_measures_are_trec_evals(labels, rnd):
    if not any(labels):
        labels[0] = True
    docnos = [f"d{i}" for i in range(len(labels))]
    ranks = rnd.sample(range(1, 100), len(docnos))  # distinct: no tie-break question
    scores = {d: float(r) for d, r in zip(docnos, ranks, strict=True)}
    run = {"1": scores}
    probs = {"1": {d: float(r) for d, r in zip(docnos, labels, strict=True)}}
    ours = run_expected(probs, run, measures=["EAP", "EP@5", "EnDCG@5"]).mean
    theirs = run_evaluate(
        {"1": {d: int(r) for d, r in zip(docnos, labels, strict=True)}},
        run,
        measures=["AP", "P@5", "nDCG@5"],
    ).mean
    assert ours["EAP"] == pytest.approx(theirs["AP"])
    assert ours["EP@5"] == pytest.approx(theirs["P@5"])
    assert ours["EnDCG@5"] == pytest.approx(theirs["nDCG@5"])


def test_expected_ndcg_hand_computed():
    gains = {"a": 0.5, "b": 1.0, "c": 0.25}
    value = expected_ndcg(["a", "c", "b"], gains, 2)
    ideal = 1.0 + 0.5 / math.log2(3)
    assert value == pytest.approx((0.5 + 0.25 / math.log2(3)) / ideal)


def test_run_expected_skips_topics_without_probability_mass_and_rejects_bad_names():
    probs = {"1": {"a": 0.5}, "2": {"b": 0.0}}
    result = run_expected(probs, {"1": {"a": 1.0}})
    assert set(result.per_topic) == {"1"}
    assert result.mean["EAP"] == pytest.approx(1.0)
    assert [r[1] for r in result.rows()][-1] == "all"
    with pytest.raises(DomainError, match="EnDCG@k"):
        run_expected(probs, {}, measures=["MAP"])


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(st.sampled_from("abcdef"), st.integers(0, 2), max_size=6),
    st.dictionaries(st.sampled_from("abcdefgh"), st.floats(0, 1), max_size=8),
)
def test_human_labels_always_override_probabilities(human, model):
    merged = qrels_probabilities({"1": human}, {"1": model})["1"]
    for docno, grade in human.items():
        assert merged[docno] == float(grade >= 1)
    for docno, p in model.items():
        if docno not in human:
            assert merged[docno] == p


def test_human_labels_override_inferred_ones():
    merged = labels_merge(
        human={"1": {"a": 0, "b": 1}}, inferred={"1": {"a": 1, "c": 1}, "2": {"x": 1}}
    )
    assert merged == {"1": {"a": 0, "b": 1, "c": 1}, "2": {"x": 1}}
    probs = qrels_probabilities(
        {"1": {"a": 2, "b": 1}}, {"1": {"a": 0.2, "c": 0.7}}, level=2
    )
    assert probs == {"1": {"a": 1.0, "b": 0.0, "c": 0.7}}
