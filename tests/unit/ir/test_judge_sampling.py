"""statAP's design steered by a judge: exact inclusion probabilities.

Expected values come from brute-force enumeration of every sequence of draws, never
from the code under test.
"""

import math
import random
from fractions import Fraction
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nuggets_app.ir.judge_sampling import (
    JUDGE_FLOOR,
    draw_judge_shaped,
    expected_distinct,
    judge_shaped_distribution,
    planned_draws,
)
from nuggets_app.ir.sampling import (
    PI_CENSUS,
    PI_EXACT,
    SamplingError,
    draw_statap,
    pool_distribution,
)

RUNS = {"run1": ["a", "b", "c", "d"], "run2": ["c", "a", "e"]}

weights = st.floats(min_value=0.0, max_value=1.0)


@st.composite
def pools(draw, max_size=6):
    size = draw(st.integers(min_value=1, max_value=max_size))
    docnos = [f"d{i}" for i in range(size)]
    raw = draw(st.lists(st.integers(1, 50), min_size=size, max_size=size))
    prior = {d: r / sum(raw) for d, r in zip(docnos, raw, strict=True)}
    # Some documents unlabelled, some labels beyond the pool.
    strength = {
        d: draw(st.floats(min_value=0.0, max_value=1.0))
        for d in docnos
        if draw(st.booleans())
    }
    strength["beyond"] = 1.0
    return prior, strength


def brute_force(
    p: dict[str, float], draws: int
) -> tuple[dict[str, Fraction], Fraction]:
    """P(d in S) and E|S| by enumerating every sequence of ``draws`` draws."""
    keys = sorted(p)
    exact = {d: Fraction(p[d]) for d in keys}
    total = sum(exact.values())
    exact = {d: v / total for d, v in exact.items()}
    inclusion = dict.fromkeys(keys, Fraction(0))
    distinct = Fraction(0)
    for sequence in product(keys, repeat=draws):
        prob = Fraction(1)
        for d in sequence:
            prob *= exact[d]
        for d in set(sequence):
            inclusion[d] += prob
        distinct += prob * len(set(sequence))
    return inclusion, distinct


@given(pools(), weights)
def test_the_distribution_is_positive_and_sums_to_one(pool, weight):
    prior, strength = pool
    p = judge_shaped_distribution(prior, strength, weight)
    assert set(p) == set(prior)
    assert all(value > 0 for value in p.values())
    assert math.fsum(p.values()) == pytest.approx(1.0, abs=1e-12)


@given(pools())
def test_a_weight_of_zero_is_statap_s_distribution(pool):
    prior, strength = pool
    assert judge_shaped_distribution(prior, strength, 0.0) == prior


@given(pools(max_size=4), weights, st.integers(1, 4))
@settings(max_examples=60, deadline=None)
def test_inclusion_probabilities_match_brute_force_enumeration(pool, weight, n):
    prior, strength = pool
    p = judge_shaped_distribution(prior, strength, weight)
    draw = draw_judge_shaped(prior, strength, n, random.Random(1), weight)
    if n >= len(prior):
        assert draw.pi_method == PI_CENSUS
        assert set(draw.inclusion.values()) == {1.0}
        return
    assert draw.pi_method == PI_EXACT
    k = draw.draws
    assert k == planned_draws(p, n)
    if k > 6:  # enumeration grows as N^K
        return
    inclusion, distinct = brute_force(p, k)
    for docno, prob in inclusion.items():
        assert draw.inclusion[docno] == pytest.approx(float(prob), rel=1e-9)
    assert math.fsum(draw.inclusion.values()) == pytest.approx(float(distinct))


@given(pools(), weights, st.integers(1, 8), st.integers(0, 10**6))
@settings(deadline=None)
def test_every_pooled_document_has_a_probability_in_zero_one(pool, weight, n, seed):
    prior, strength = pool
    draw = draw_judge_shaped(prior, strength, n, random.Random(seed), weight)
    assert set(draw.inclusion) == set(prior)
    assert all(0.0 < pi <= 1.0 for pi in draw.inclusion.values())
    assert set(draw.order) <= set(prior)


@given(pools(), weights, st.integers(1, 8))
def test_the_planned_draws_are_the_least_reaching_the_size(pool, weight, n):
    prior, strength = pool
    p = judge_shaped_distribution(prior, strength, weight)
    if n >= len(p):
        return
    k = planned_draws(p, n)
    assert expected_distinct(p, k) >= n
    assert k == 1 or expected_distinct(p, k - 1) < n


@given(pools(), st.integers(1, 8), st.integers(0, 10**6))
@settings(deadline=None)
def test_with_a_weight_of_zero_the_draw_is_statap_s_with_fixed_draws(pool, n, seed):
    prior, strength = pool
    ours = draw_judge_shaped(prior, strength, n, random.Random(seed), 0.0)
    if n >= len(prior):
        theirs = draw_statap(prior, n, random.Random(seed))
    else:
        k = planned_draws(prior, n)
        theirs = draw_statap(prior, k, random.Random(seed), stop="draws")
    assert ours == theirs


def test_a_document_the_judge_calls_relevant_is_likelier_drawn():
    prior = pool_distribution(RUNS)
    plain = draw_judge_shaped(prior, {}, 2, random.Random(3), 0.5)
    steered = draw_judge_shaped(prior, {"d": 1.0}, 2, random.Random(3), 0.5)
    assert steered.inclusion["d"] > plain.inclusion["d"]
    assert steered.inclusion["a"] < plain.inclusion["a"]


def test_the_judge_s_shape_keeps_a_floor_for_unlabelled_documents():
    p = judge_shaped_distribution({"a": 0.5, "b": 0.5}, {"a": 1.0}, 1.0)
    assert p["b"] / p["a"] == pytest.approx(JUDGE_FLOOR / (1 + JUDGE_FLOOR))


def test_a_larger_size_continues_the_same_draws():
    prior = pool_distribution(RUNS)
    small = draw_judge_shaped(prior, {"e": 0.9}, 2, random.Random(7))
    large = draw_judge_shaped(prior, {"e": 0.9}, 4, random.Random(7))
    assert large.draws >= small.draws
    assert large.order[: len(small.order)] == small.order


@pytest.mark.parametrize("weight", [-0.1, 1.5, math.nan])
def test_it_refuses_a_weight_outside_zero_one(weight):
    with pytest.raises(SamplingError, match="weight must lie in"):
        judge_shaped_distribution({"a": 1.0}, {}, weight)
