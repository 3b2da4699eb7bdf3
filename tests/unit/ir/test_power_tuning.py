"""Power tuning of the default estimator: each topic's λ against a brute-force search,
the tuned estimator as the plain one on λ p, and its exact bias and error on the tiny
pool of docs/reference/algorithms.md 1.5 (docs/explanation/model-assisted.md, "Power tuning")."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nuggets_app.ir.estimator import PLAIN, power_tuning
from nuggets_app.ir.model_assisted import (
    GradeModel,
    ModelAssistedError,
    topic_estimates,
    topic_sample,
)
from nuggets_app.ir.sampling import inclusion_probabilities, pool_distribution
from tests.unit.ir.estimators import TUNED
from tests.unit.ir.test_model_assisted import (
    MODELS,
    RUNS,
    TRUTH,
    prels_of,
    samples_of_design,
    small_topics,
)

GRID = 4_000


def estimated_variance(topic, probs, level, lam):
    """``Σ_S (1 - π)/π² (y - λ p)²``: the variance estimate of R̂ that λ̂ minimises."""
    return math.fsum(
        (1 - pi) / pi**2 * (float(topic.rel[d] >= level) - lam * probs.get(d, 0.0)) ** 2
        for d, pi in topic.inclusion_prob.items()
        if d in topic.rel and pi > 0
    )


@settings(max_examples=300, deadline=None)
@given(small_topics(graded=False))
def test_lambda_is_half_way_to_the_variance_minimiser_found_by_search(case):
    topic, probs, _, _, level, _ = case
    informative = any(
        0 < topic.inclusion_prob[d] < 1 and probs.get(d, 0.0) > 0 for d in topic.rel
    )
    lam = power_tuning(topic, probs, level=level)
    if not informative:
        assert lam == 1.0
        return
    grid = [i / GRID for i in range(GRID + 1)]
    best = min(grid, key=lambda x: estimated_variance(topic, probs, level, x))
    assert 0.5 <= lam <= 1.0
    found = estimated_variance(topic, probs, level, 2 * lam - 1)
    assert found <= estimated_variance(topic, probs, level, best) + 1e-9
    assert 2 * lam - 1 == pytest.approx(best, abs=1.5 / GRID)


@settings(max_examples=200, deadline=None)
@given(small_topics(graded=True))
def test_the_tuned_estimates_are_the_plain_ones_on_lambda_p(case):
    topic, probs, ranking, grades, level, k = case
    lam = power_tuning(topic, probs, level=level)
    tuned = topic_sample(
        topic, probs, level=level, cutoff=k, grades=grades, estimator=TUNED
    )
    assert tuned.scale == lam
    scaled_grades = grades.__class__(
        {"1": {d: [lam * q for q in lv] for d, lv in grades.at_least["1"].items()}},
        grades.gains,
    )
    plain = topic_sample(
        topic,
        {d: lam * p for d, p in probs.items()},
        level=level,
        cutoff=k,
        grades=scaled_grades,
        estimator=PLAIN,
    )
    got, want = topic_estimates(tuned, ranking), topic_estimates(plain, ranking)
    for name, estimate in want.items():
        assert got[name].estimate == pytest.approx(
            estimate.estimate, abs=1e-12, nan_ok=True
        )
        assert got[name].var == pytest.approx(estimate.var, abs=1e-12, nan_ok=True)


def exact_error(p, draws, tune):
    """Exact bias and mean squared error of R̂ over every sample of the design."""
    q = pool_distribution(RUNS)
    pi = inclusion_probabilities(q, draws)
    truth = sum(TRUTH.values())
    bias = mse = 0.0
    for sample, prob in samples_of_design(q, draws).items():
        judged = prels_of({d: TRUTH[d] for d in sorted(sample)}, pi)
        estimator = TUNED if tune else PLAIN
        r = topic_sample(judged, p, cutoff=3, estimator=estimator).est_r
        bias += prob * (r - truth)
        mse += prob * (r - truth) ** 2
    return bias, mse


@pytest.mark.parametrize("draws", [2, 3, 4])
def test_tuning_trades_a_small_bias_for_less_error_from_a_wrong_model(draws):
    """The reversed model (high p on non-relevant documents) is trusted less: the
    exact MSE of R̂ falls, at a bias well under its standard error; a perfect model
    keeps λ = 1 and stays exact; p ≡ 0 is statAP either way."""
    plain_bias, plain_mse = exact_error(MODELS["reversed"], draws, tune=False)
    bias, mse = exact_error(MODELS["reversed"], draws, tune=True)
    assert plain_bias == pytest.approx(0.0, abs=1e-12)
    assert mse < plain_mse
    assert abs(bias) < 0.25 * math.sqrt(mse - bias**2)
    assert exact_error(MODELS["perfect"], draws, tune=True) == pytest.approx(
        (0.0, 0.0), abs=1e-12
    )
    assert exact_error(MODELS["zero"], draws, tune=True) == pytest.approx(
        exact_error(MODELS["zero"], draws, tune=False), abs=1e-12
    )


@settings(max_examples=200, deadline=None)
@given(small_topics(graded=False), st.data())
def test_unsampled_documents_keep_their_calibrated_p_under_tuning(case, data):
    """A new run's unpooled documents (never sampled) enter with p as given, while
    the pooled documents' p is scaled by λ: the tuned estimates equal the untuned
    ones on λ p for the pool plus the raw p of the unpooled documents, whatever the
    run ranks; an unpooled entry never overrides a pooled document's p."""
    topic, probs, ranking, _, level, k = case
    outside = [f"new{i}" for i in range(data.draw(st.integers(1, 4)))]
    fresh = {d: data.draw(st.floats(0.0, 1.0)) for d in outside}
    clash = {d: 1.0 - p for d, p in probs.items()}  # pooled documents: ignored
    lam = power_tuning(topic, probs, level=level)
    tuned = topic_sample(
        topic,
        probs,
        level=level,
        cutoff=k,
        unsampled={**clash, **fresh},
        estimator=TUNED,
    )
    plain = topic_sample(
        topic,
        {**fresh, **{d: lam * p for d, p in probs.items()}},
        level=level,
        cutoff=k,
        estimator=PLAIN,
    )
    assert tuned.scale == lam
    assert tuned.est_r == pytest.approx(plain.est_r, abs=1e-12)
    order = data.draw(st.permutations([*ranking, *outside]))
    got, want = topic_estimates(tuned, order), topic_estimates(plain, order)
    for name, estimate in want.items():
        assert got[name].estimate == pytest.approx(
            estimate.estimate, abs=1e-12, nan_ok=True
        )
        assert got[name].var == pytest.approx(estimate.var, abs=1e-12, nan_ok=True)


def test_unsampled_documents_are_refused_with_graded_relevance_and_bad_p():
    topic = prels_of({"a": 1, "b": 0}, {"a": 0.5, "b": 0.5})
    with pytest.raises(ModelAssistedError, match=r"p\(new\) = 1.5"):
        topic_sample(topic, {"a": 0.4}, unsampled={"new": 1.5}, estimator=TUNED)
    grades = GradeModel({"1": {"a": [0.5]}}, (0.0, 1.0))
    with pytest.raises(ModelAssistedError, match="binary relevance only"):
        topic_sample(
            topic, {"a": 0.4}, grades=grades, unsampled={"new": 0.5}, estimator=TUNED
        )
