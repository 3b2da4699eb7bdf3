"""statAP sampling (docs/reference/algorithms.md section 1): test vectors and statistical checks.

Expected values come from the specification's section 1.5, from exact fractions
computed here by brute force, or from the binomial law; never from the code under test.
"""

import math
import random
from fractions import Fraction
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nuggets_app.ir.sampling import (
    PI_CENSUS,
    PI_EXACT,
    PI_STOP_IGNORED,
    SamplingError,
    ap_prior_weights,
    draw_depth,
    draw_per_run_quota,
    draw_statap,
    draw_uniform,
    inclusion_probabilities,
    pool_distribution,
)

TOL = 1e-9
RUNS = {"run1": ["a", "b", "c", "d"], "run2": ["c", "a", "e"]}
# docs/reference/algorithms.md 1.5: p(d), pi with K=3, pi with K=5.
VECTORS = {
    "a": (199 / 576, 0.719613822235819, 0.8798858053040447),
    "b": (25 / 192, 0.3419699492277922, 0.5021755619035888),
    "c": (193 / 576, 0.7060124955877192, 0.8700185274560756),
    "d": (5 / 64, 0.21654129028320312, 0.3341748612001538),
    "e": (1 / 9, 0.29766803840877915, 0.44507104269335634),
}
# Binomial tolerance: 4.5 standard errors (two-sided false alarm ~7e-6 per check).
SIGMAS = 4.5


def within_binomial(freq: float, prob: float, trials: int) -> bool:
    """|freq - prob| within SIGMAS binomial standard errors (exact 0/1 must match)."""
    if prob in (0.0, 1.0):
        return freq == prob
    return abs(freq - prob) <= SIGMAS * math.sqrt(prob * (1 - prob) / trials)


def frequencies(draws, pool) -> dict[str, float]:
    counts = dict.fromkeys(pool, 0)
    for draw in draws:
        for docno in draw.order:
            counts[docno] += 1
    return {docno: count / len(draws) for docno, count in counts.items()}


def exact_distinct_stop_pi(p: dict[str, float], n: int) -> dict[str, float]:
    """Brute force: P(d in sample) when drawing with replacement until n distinct.

    Repeats do not change the set, so the next new document is d with probability
    p(d) / (1 - p(T)) given the set T held so far.
    """
    states = {frozenset(): 1.0}
    for _ in range(n):
        following: dict[frozenset, float] = {}
        for held, prob in states.items():
            rest = 1.0 - sum(p[d] for d in held)
            for docno in p:
                if docno not in held:
                    grown = held | {docno}
                    following[grown] = (
                        following.get(grown, 0.0) + prob * p[docno] / rest
                    )
        states = following
    return {d: sum(prob for held, prob in states.items() if d in held) for d in p}


def fraction_weights(size: int) -> list[Fraction]:
    harmonic = [Fraction(0)]
    for i in range(1, size + 1):
        harmonic.append(harmonic[-1] + Fraction(1, i))
    return [
        (1 + harmonic[size] - harmonic[r - 1]) / (2 * size) for r in range(1, size + 1)
    ]


def test_ap_prior_weights_match_the_specification_vectors():
    assert ap_prior_weights(4) == pytest.approx(
        [37 / 96, 25 / 96, 19 / 96, 5 / 32], abs=TOL
    )
    assert ap_prior_weights(3) == pytest.approx([17 / 36, 11 / 36, 2 / 9], abs=TOL)
    assert ap_prior_weights(1) == [1.0]


@pytest.mark.parametrize("size", [1, 2, 7, 100, 1000])
def test_ap_prior_weights_sum_to_one_and_decrease(size):
    weights = ap_prior_weights(size)
    assert math.fsum(weights) == pytest.approx(1.0, abs=1e-12)
    assert all(a > b for a, b in pairwise(weights))
    assert weights[-1] == pytest.approx((1 + 1 / size) / (2 * size), abs=1e-15)
    exact = fraction_weights(size)
    assert max(abs(w - float(f)) for w, f in zip(weights, exact, strict=True)) < 1e-15


def test_ap_prior_weights_reject_an_empty_list():
    with pytest.raises(SamplingError, match="at least 1"):
        ap_prior_weights(0)


def test_pool_distribution_matches_the_specification_vectors():
    p = pool_distribution(RUNS)
    assert set(p) == set(VECTORS)
    for docno, (prob, _, _) in VECTORS.items():
        assert p[docno] == pytest.approx(prob, abs=TOL)
    assert math.fsum(p.values()) == pytest.approx(1.0, abs=1e-12)


def test_runs_without_documents_are_left_out_of_s():
    assert pool_distribution({**RUNS, "empty": []}) == pool_distribution(RUNS)


def test_pool_distribution_does_not_depend_on_run_order():
    reordered = {"run2": RUNS["run2"], "run1": RUNS["run1"]}
    assert pool_distribution(reordered) == pool_distribution(RUNS)


def test_a_document_twice_in_one_run_is_rejected():
    with pytest.raises(SamplingError, match="run r: document x appears twice"):
        pool_distribution({"r": ["x", "y", "x"]})


@given(
    st.dictionaries(
        st.sampled_from(["r1", "r2", "r3", "r4"]),
        st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10),
        min_size=1,
    )
)
def test_pool_distribution_equals_an_exact_fraction_reference(rankings):
    nonempty = {name: docs for name, docs in rankings.items() if docs}
    expected: dict[str, Fraction] = {}
    for docs in nonempty.values():
        for docno, weight in zip(docs, fraction_weights(len(docs)), strict=True):
            expected[docno] = expected.get(docno, Fraction(0)) + weight / len(nonempty)
    p = pool_distribution(rankings)
    assert set(p) == set(expected)
    for docno, prob in expected.items():
        assert p[docno] == pytest.approx(float(prob), abs=1e-15)


def test_inclusion_probabilities_match_the_specification_vectors():
    p = pool_distribution(RUNS)
    three = inclusion_probabilities(p, 3)
    five = inclusion_probabilities(p, 5)
    for docno, (_, pi3, pi5) in VECTORS.items():
        assert three[docno] == pytest.approx(pi3, abs=TOL)
        assert five[docno] == pytest.approx(pi5, abs=TOL)
    assert set(inclusion_probabilities(p, 0).values()) == {0.0}
    assert inclusion_probabilities({"only": 1.0}, 4) == {"only": 1.0}


def test_a_statap_sample_is_reproducible_for_a_seed():
    p = pool_distribution(RUNS)
    first = draw_statap(p, 3, random.Random(42))
    again = draw_statap(dict(reversed(list(p.items()))), 3, random.Random(42))
    assert first == again
    orders = {draw_statap(p, 3, random.Random(seed)).order for seed in range(50)}
    assert len(orders) > 5


def test_a_statap_sample_holds_n_distinct_documents_and_records_k():
    p = pool_distribution(RUNS)
    draw = draw_statap(p, 3, random.Random(7))
    assert len(draw.order) == len(set(draw.order)) == 3
    assert draw.draws >= 3
    assert draw.pi_method == PI_STOP_IGNORED
    assert draw.inclusion == pytest.approx(inclusion_probabilities(p, draw.draws))


def test_extending_a_sample_repeats_its_draws_and_continues():
    p = pool_distribution({"r1": list("abcdefghijklmnop"), "r2": list("ponmlkjihg")})
    small = draw_statap(p, 4, random.Random(3))
    large = draw_statap(p, 9, random.Random(3))
    assert large.order[:4] == small.order
    assert large.draws >= small.draws


def test_n_at_least_the_pool_size_judges_everything_with_pi_one():
    p = pool_distribution(RUNS)
    draw = draw_statap(p, 5, random.Random(1))
    assert set(draw.order) == set(p)
    assert draw.order[:2] == ("a", "c")  # the likeliest first
    assert set(draw.inclusion.values()) == {1.0}
    assert draw.pi_method == PI_CENSUS


def test_max_draws_stops_the_sampler():
    p = pool_distribution(RUNS)
    draw = draw_statap(p, 4, random.Random(5), max_draws=2)
    assert draw.draws == 2
    assert 1 <= len(draw.order) <= 2
    assert draw.inclusion == pytest.approx(inclusion_probabilities(p, 2))


def test_bad_sizes_and_distributions_are_rejected():
    p = pool_distribution(RUNS)
    with pytest.raises(SamplingError, match="at least 1"):
        draw_statap(p, 0, random.Random(1))
    with pytest.raises(SamplingError, match="stop must be"):
        draw_statap(p, 2, random.Random(1), stop="never")
    with pytest.raises(SamplingError, match="sum to"):
        draw_statap({"a": 0.5, "b": 0.2}, 1, random.Random(1))
    with pytest.raises(SamplingError, match="document b has probability"):
        draw_statap({"a": 1.0, "b": 0.0}, 1, random.Random(1))


@pytest.mark.parametrize("draws", [3, 5])
def test_empirical_inclusion_matches_pi_when_k_is_fixed(draws):
    p = pool_distribution(RUNS)
    trials = 4000
    samples = [
        draw_statap(p, draws, random.Random(s), stop="draws") for s in range(trials)
    ]
    assert {s.draws for s in samples} == {draws}
    assert {s.pi_method for s in samples} == {PI_EXACT}
    expected = inclusion_probabilities(p, draws)
    for docno, freq in frequencies(samples, p).items():
        assert within_binomial(freq, expected[docno], trials), docno


def test_empirical_inclusion_matches_pi_on_a_larger_pool():
    rng = random.Random(2024)
    docs = [f"D{i:03d}" for i in range(60)]
    rankings = {f"run{i}": rng.sample(docs, rng.randint(5, 30)) for i in range(6)}
    p = pool_distribution(rankings)
    trials = 2000
    samples = [
        draw_statap(p, 25, random.Random(s), stop="draws") for s in range(trials)
    ]
    expected = inclusion_probabilities(p, 25)
    for docno, freq in frequencies(samples, p).items():
        assert within_binomial(freq, expected[docno], trials), docno


@pytest.mark.parametrize("n", [2, 3, 4])
def test_distinct_stopping_matches_the_exact_design_probabilities(n):
    """Stopping at n distinct: empirical frequencies match the exact brute-force pi.

    The stored pi = 1 - (1 - p)^K ignores the stopping rule (docs/reference/algorithms.md 1.3). A
    coupling bound holds: the sample lies between the first K_min and the first K_max
    draws, so the exact pi lies between 1 - (1-p)^K_min and 1 - (1-p)^K_max over the
    observed range of K. The approximation itself is only that loose, by design.
    """
    p = pool_distribution(RUNS)
    trials = 4000
    samples = [draw_statap(p, n, random.Random(s)) for s in range(trials)]
    exact = exact_distinct_stop_pi(p, n)
    assert math.fsum(exact.values()) == pytest.approx(n)
    for docno, freq in frequencies(samples, p).items():
        assert within_binomial(freq, exact[docno], trials), docno
    low = inclusion_probabilities(p, min(s.draws for s in samples))
    high = inclusion_probabilities(p, max(s.draws for s in samples))
    for docno, prob in exact.items():
        assert low[docno] <= prob <= high[docno]


def test_uniform_sampling_is_exact_and_extends():
    pool = [f"D{i}" for i in range(10)]
    trials = 3000
    samples = [draw_uniform(pool, 3, random.Random(s)) for s in range(trials)]
    assert {len(set(s.order)) for s in samples} == {3}
    assert set(samples[0].inclusion.values()) == {0.3}
    for docno, freq in frequencies(samples, pool).items():
        assert within_binomial(freq, 0.3, trials), docno
    assert draw_uniform(pool, 6, random.Random(9)).order[:3] == (
        draw_uniform(reversed(pool), 3, random.Random(9)).order
    )
    assert draw_uniform(pool, 12, random.Random(1)).pi_method == PI_CENSUS


def test_depth_sampling_takes_the_best_ranked_documents():
    best = {"a": 1, "b": 2, "c": 1, "d": 4, "e": 3}
    p = pool_distribution(RUNS)
    draw = draw_depth(best, 3, p)
    assert draw.order == ("a", "c", "b")  # a and c tie at rank 1; a has the higher p
    assert draw.inclusion == {"a": 1.0, "b": 1.0, "c": 1.0, "d": 0.0, "e": 0.0}


QUOTA_RUNS = {
    "r1": list("abcdefgh"),
    "r2": list("hgfedcba"),
    "r3": list("aixyz"),
    "r4": list("qrstu"),
    "r0": [],
}


def brute_force_quota_pi(rankings, draws_per_run: int) -> dict[str, float]:
    """1 - prod_s (1 - w_s(d))^K_s with the weights from exact fractions."""
    miss: dict[str, float] = {}
    for docs in rankings.values():
        for docno, weight in zip(docs, fraction_weights(len(docs)), strict=False):
            miss[docno] = miss.get(docno, 1.0) * (1 - float(weight)) ** draws_per_run
    return {docno: 1 - value for docno, value in miss.items()}


def test_per_run_quota_inclusion_is_exact_with_fixed_draws():
    trials = 3000
    samples = [
        draw_per_run_quota(QUOTA_RUNS, 2, random.Random(s), stop="draws")
        for s in range(trials)
    ]
    assert samples[0].run_draws == {"r1": 2, "r2": 2, "r3": 2, "r4": 2}
    assert samples[0].draws == 8
    expected = brute_force_quota_pi(QUOTA_RUNS, 2)
    assert samples[0].inclusion == pytest.approx(expected, abs=1e-12)
    for docno, freq in frequencies(samples, expected).items():
        assert within_binomial(freq, expected[docno], trials), docno


def test_per_run_quota_treats_every_run_fairly():
    for seed in range(200):
        draw = draw_per_run_quota(QUOTA_RUNS, 10, random.Random(seed))
        assert len(draw.order) == 10
        judged = set(draw.order)
        own = [len(judged & set(docs)) for docs in QUOTA_RUNS.values() if docs]
        # Every run's own distinct draws differ by at most one, so each run has at
        # least floor(10 / 4) = 2 of its documents judged (more through overlaps).
        assert min(own) >= 2, (seed, own)
        assert draw.pi_method == PI_STOP_IGNORED
        assert draw == draw_per_run_quota(QUOTA_RUNS, 10, random.Random(seed))


def test_per_run_quota_extends_and_covers_the_pool():
    small = draw_per_run_quota(QUOTA_RUNS, 6, random.Random(11))
    large = draw_per_run_quota(QUOTA_RUNS, 12, random.Random(11))
    assert large.order[:6] == small.order
    census = draw_per_run_quota(QUOTA_RUNS, 50, random.Random(11))
    assert len(census.order) == 17  # a-h, i, x-z, q-u
    assert set(census.inclusion.values()) == {1.0}


def test_a_fixed_number_of_draws_gives_pi_of_that_number_when_the_pool_is_held_early():
    # Two documents and 50 draws: both are held after a few draws; pi is that of 50.
    p = {"a": 0.5, "b": 0.5}
    draw = draw_statap(p, 50, random.Random(1), stop="draws")
    assert set(draw.order) == {"a", "b"}
    assert draw.draws == 50
    assert draw.inclusion["a"] == pytest.approx(1 - 0.5**50)
