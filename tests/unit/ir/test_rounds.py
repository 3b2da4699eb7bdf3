"""Samples in rounds (nuggets_app.ir.rounds): exact expectations by enumerating every
sample path of an adaptive three-round design, and the recorded probabilities checked
against the drawing code (exactly over the systematic start, empirically over seeds)."""

from __future__ import annotations

import itertools
import math
import random
from collections import defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nuggets_app.ir.estimator import PLAIN
from nuggets_app.ir.model_assisted import topic_estimates, topic_sample
from nuggets_app.ir.rounds import (
    Round,
    ap_importance,
    capped_probabilities,
    draw_next_round,
    draw_systematic,
    round_budgets,
    round_cap,
    round_design,
    round_lambdas,
    round_weights,
    rounds_prels,
    systematic_select,
)
from nuggets_app.ir.sampling import SamplingError, pool_distribution

EXACT = 1e-12
RUNS = {"run1": ["a", "b", "c", "d"], "run2": ["c", "a", "e"]}
TRUTH = {"a": 1, "b": 0, "c": 1, "d": 1, "e": 0}
FIXED_P = {"a": 0.9, "b": 0.2, "c": 0.7, "d": 0.6, "e": 0.1}
REVERSED_P = {"a": 0.1, "b": 0.9, "c": 0.2, "d": 0.0, "e": 1.0}


def adaptive_model(judged):
    """A toy model fitted on the judged labels: the design then depends on them."""
    rate = (1 + sum(judged.values())) / (2 + len(judged))
    return {d: min(0.95, rate * (0.5 + 0.1 * i)) for i, d in enumerate(sorted(TRUTH))}


def with_replacement_paths(q, draws):
    """Every distinct set of ``draws`` draws with replacement, with its probability."""
    out = defaultdict(float)
    for seq in itertools.product(sorted(q), repeat=draws):
        out[tuple(dict.fromkeys(seq))] += math.prod(q[d] for d in seq)
    return out


def systematic_paths(inclusion):
    """Every outcome of :func:`draw_systematic`: uniform order, uniform start; the
    selection is constant between the fractional parts of the cumulated π."""
    out = defaultdict(float)
    keys = sorted(inclusion)
    orders = list(itertools.permutations(keys))
    for order in orders:
        cuts = {0.0, 1.0}
        total = 0.0
        for d in order:
            total += inclusion[d]
            cuts.add(total - math.floor(total))
        edges = sorted(cuts)
        for low, high in itertools.pairwise(edges):
            if high - low <= 0:
                continue
            chosen = systematic_select(order, inclusion, (low + high) / 2)
            out[chosen] += (high - low) / len(orders)
    return out


def all_paths(budgets, design="model"):
    """``(probability, rounds)`` of every path of the three-round adaptive design."""
    q = pool_distribution(RUNS)
    lambdas = round_lambdas(budgets)
    k = budgets[0]
    pi1 = {d: 1 - (1 - q[d]) ** k for d in q}  # stop="draws": exact
    for first, prob1 in with_replacement_paths(q, k).items():
        paths = [(prob1, [Round(1, first, pi1)])]
        for number in range(2, len(budgets) + 1):
            grown = []
            for prob, rounds in paths:
                drawn = [d for r in rounds for d in r.order]
                p = adaptive_model({d: TRUTH[d] for d in drawn})
                nxt = draw_next_round(
                    q,
                    p,
                    drawn,
                    budgets[number - 1],
                    number,
                    lambdas,
                    random.Random(0),
                    design=design,
                )
                if design == "top":
                    grown.append((prob, [*rounds, nxt]))
                    continue
                for chosen, step in systematic_paths(nxt.inclusion).items():
                    grown.append(
                        (prob * step, [*rounds, Round(number, chosen, nxt.inclusion)])
                    )
            paths = grown
        yield from paths


def martingale(rounds, lambdas, z):
    """``Σ_t λ_t Ẑ_t`` computed round by round (the reference for the weights)."""
    total, before = 0.0, 0.0
    for lam, one in zip(lambdas, rounds, strict=True):
        total += lam * (before + sum(z[d] / one.inclusion[d] for d in one.order))
        before += sum(z[d] for d in one.order)
    return total


@pytest.mark.parametrize("budgets", [[2, 1, 1], [1, 2, 1], [2, 2]])
def test_every_document_and_every_linear_sum_is_exactly_unbiased(budgets):
    lambdas = round_lambdas(budgets)
    paths = list(all_paths(budgets))
    assert math.fsum(prob for prob, _ in paths) == pytest.approx(1.0, abs=EXACT)
    hit = defaultdict(float)
    expected = defaultdict(float)
    ranking = RUNS["run1"]
    for prob, rounds in paths:
        weights = round_weights(rounds, lambdas)
        assert all(w.weight >= 1.0 for w in weights.values())
        for d, w in weights.items():
            hit[d] += prob * w.weight
        z = {d: TRUTH[d] - FIXED_P[d] for d in TRUTH}
        by_weight = math.fsum(z[d] * w.weight for d, w in weights.items())
        assert by_weight == pytest.approx(martingale(rounds, lambdas, z), abs=EXACT)
        labels = {"1": {d: TRUTH[d] for d in weights}}
        prels = rounds_prels(labels, {"1": weights})["1"]
        # PLAIN: the plain difference estimator, exact for a fixed p (the reported one
        # tunes p per topic and is approximately unbiased: test_power_tuning.py)
        for name, p in (("statap", {}), ("fixed", FIXED_P), ("rev", REVERSED_P)):
            est = topic_estimates(
                topic_sample(prels, p, cutoff=2, estimator=PLAIN), ranking
            )
            expected[name, "R"] += prob * est["R"].estimate
            expected[name, "P@2"] += prob * est["P@2"].estimate
        expected["est_r", "R"] += prob * prels.est_r
    for d in TRUTH:  # E[1[d ∈ S] w_d] = 1
        assert hit[d] == pytest.approx(1.0, abs=EXACT)
    for name in ("statap", "fixed", "rev"):
        assert expected[name, "R"] == pytest.approx(sum(TRUTH.values()), abs=EXACT)
        assert expected[name, "P@2"] == pytest.approx(
            sum(TRUTH[d] for d in ranking[:2]) / 2, abs=EXACT
        )
    assert expected["est_r", "R"] == pytest.approx(sum(TRUTH.values()), abs=EXACT)


def test_top_p_judging_is_biased():
    budgets = [1, 1, 1]
    total = 0.0
    for prob, rounds in all_paths(budgets, design="top"):
        weights = round_weights(rounds, round_lambdas(budgets), design="top")
        total += prob * sum(TRUTH[d] * w.weight for d, w in weights.items())
    assert total < sum(TRUTH.values()) - 0.1


masses = st.dictionaries(
    st.sampled_from("abcdefgh"),
    st.floats(min_value=1e-3, max_value=1.0),
    min_size=1,
    max_size=8,
)


@given(
    masses, st.integers(min_value=1, max_value=8), st.sampled_from([1.0, 0.5, 1 / 3])
)
def test_capped_probabilities_fill_the_budget_under_the_cap(mass, n, cap):
    pi = capped_probabilities(mass, n, cap)
    assert math.fsum(pi.values()) == pytest.approx(min(n, cap * len(mass)), abs=1e-9)
    assert all(0 < v <= cap + 1e-12 for v in pi.values())
    # below the cap, π is proportional to the mass
    free = [(mass[d], v) for d, v in pi.items() if v < cap - 1e-9]
    for (m1, v1), (m2, v2) in itertools.pairwise(free):
        assert v1 * m2 == pytest.approx(v2 * m1, rel=1e-9)


@settings(max_examples=60)
@given(masses, st.integers(min_value=1, max_value=8), st.randoms(use_true_random=False))
def test_systematic_selection_draws_each_document_with_its_recorded_probability(
    mass, n, rnd
):
    pi = capped_probabilities(mass, n)
    order = sorted(pi)
    rnd.shuffle(order)
    exact = defaultdict(float)
    for chosen, prob in systematic_paths_for(order, pi).items():
        assert len(set(chosen)) == len(chosen)
        for d in chosen:
            exact[d] += prob
    for d, v in pi.items():
        assert exact[d] == pytest.approx(v, abs=1e-9)


def systematic_paths_for(order, inclusion):
    cuts, total = {0.0, 1.0}, 0.0
    for d in order:
        total += inclusion[d]
        cuts.add(total - math.floor(total))
    out = defaultdict(float)
    for low, high in itertools.pairwise(sorted(cuts)):
        if high > low:
            out[systematic_select(order, inclusion, (low + high) / 2)] += high - low
    return out


def test_next_round_frequencies_match_the_recorded_probabilities():
    q = pool_distribution({"r1": list("abcdefgh"), "r2": list("hgfedcba")[:5]})
    p = {"a": 0.9, "b": 0.5, "c": 0.4, "d": 0.05, "e": 0.5, "f": 0.3}
    lambdas = round_lambdas([2, 3])
    counts = defaultdict(int)
    trials = 20000
    recorded = None
    for seed in range(trials):
        nxt = draw_next_round(q, p, ["a", "b"], 3, 2, lambdas, random.Random(seed))
        assert len(nxt.order) == 3
        recorded = recorded or nxt.inclusion
        assert nxt.inclusion == recorded  # the design does not depend on the seed
        for d in nxt.order:
            counts[d] += 1
    assert set(recorded) == set("cdefgh")
    assert all(v <= round_cap(lambdas, 2) + 1e-12 for v in recorded.values())
    for d, v in recorded.items():
        sd = math.sqrt(v * (1 - v) / trials)
        assert abs(counts[d] / trials - v) <= 5 * sd + 1e-9


def test_design_leans_to_uncertain_documents_and_keeps_a_floor():
    q = dict.fromkeys("abcd", 0.25)
    pi = round_design(q, {"a": 0.5, "b": 0.99, "c": 0.0}, list("abcd"), 2)
    assert pi["a"] > pi["b"] > pi["c"] > 0
    assert pi["c"] == pi["d"]


def test_budgets_and_bad_input():
    assert round_budgets(10, 3) == [4, 3, 3]
    assert round_lambdas([4, 3, 3]) == [0.4, 0.3, 0.3]
    with pytest.raises(SamplingError):
        round_budgets(2, 3)
    with pytest.raises(SamplingError):
        draw_next_round({"a": 1.0}, {}, [], 1, 1, [1.0], random.Random(1))
    assert draw_systematic({}, random.Random(1)) == ()


def plug_in_ap(ranking, y, pool):
    """AP of one list with the model's plug-in labels y (R = Σ_pool y; a document's
    own term counts 1, as in the estimator), differentiated numerically below."""
    total = sum(y[d] for d in pool)
    above, num = 0.0, 0.0
    for rank, d in enumerate(ranking, 1):
        num += y[d] * (1 + above) / rank
        above += y[d]
    return num / total


@settings(max_examples=40)
@given(
    st.lists(st.floats(min_value=0.05, max_value=0.95), min_size=len(TRUTH), max_size=5)
)
def test_ap_importance_is_the_root_sum_of_squared_derivatives(values):
    probs = dict(zip(sorted(TRUTH), values, strict=True))
    pool = sorted(TRUTH)
    got = ap_importance(RUNS, probs)
    step = 1e-6
    for d in pool:
        squares = 0.0
        for ranking in RUNS.values():
            up, down = dict(probs), dict(probs)
            up[d] += step
            down[d] -= step
            slope = (
                plug_in_ap(ranking, up, pool) - plug_in_ap(ranking, down, pool)
            ) / (2 * step)
            squares += slope * slope
        assert got[d] == pytest.approx(math.sqrt(squares), rel=1e-5, abs=1e-7)
