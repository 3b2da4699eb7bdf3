"""Fitted decision rules: hand-computed examples and a brute-force property."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.maths.simulation import rule_parse
from nuggets_app.errors import DomainError
from nuggets_app.learning.rule_spec import fit_spec_parse
from nuggets_app.learning.thresholds import (
    FitError,
    expected_f1_threshold,
    rule_fit_thresholds,
    threshold_fit,
)

R, N = True, False

# score >= t:  0.9 -> F1 1/2, 0.8 -> 2/5, 0.7 -> 2/3, 0.4 -> 6/7, 0.2 -> 3/4, 0.1 -> 2/3
SIX = [(0.9, R), (0.8, N), (0.7, R), (0.4, R), (0.2, N), (0.1, N)]


def test_f1_picks_the_threshold_with_the_best_f1():
    fit = threshold_fit(SIX)
    assert fit.threshold == 0.4
    assert fit.f_beta == pytest.approx(6 / 7)
    assert (fit.tp, fit.fp, fit.fn) == (3, 1, 0)
    assert fit.precision == pytest.approx(3 / 4)
    assert fit.recall == 1.0


def test_a_small_beta_favours_precision():
    # beta = 1/4: F(0.9) = (17/16) / (17/16 + 2/16) = 17/19 beats F(0.4) = 51/67.
    fit = threshold_fit(SIX, beta=0.25)
    assert fit.threshold == 0.9
    assert fit.f_beta == pytest.approx(17 / 19)


def test_ties_go_to_the_higher_threshold():
    # F1(0.8) = 2/3 (tp 1, fn 1) and F1(0.4) = 2/3 (tp 2, fp 2).
    fit = threshold_fit([(0.8, R), (0.6, N), (0.5, N), (0.4, R)])
    assert fit.threshold == 0.8
    assert fit.f_beta == pytest.approx(2 / 3)


def test_tied_scores_enter_together():
    # t = 0.5 takes both 0.5 documents (F1 1/2); t = 0.3 gives tp 2, fp 1: 4/5.
    fit = threshold_fit([(0.5, R), (0.5, N), (0.3, R)])
    assert fit.threshold == 0.3
    assert (fit.tp, fit.fp, fit.fn) == (2, 1, 0)


def test_a_zero_score_is_never_a_threshold():
    assert threshold_fit([(0.0, R), (0.0, N)]) is None
    fit = threshold_fit([(0.5, N), (0.0, R)])
    assert (fit.threshold, fit.tp, fit.f_beta) == (0.5, 0, 0.0)


def test_no_relevant_document_fits_nothing():
    assert threshold_fit([(0.9, N), (0.1, N)]) is None
    with pytest.raises(FitError, match="no judged relevant"):
        rule_fit_thresholds({"1": [(0.9, N)]})
    with pytest.raises(FitError, match="no judged relevant"):
        rule_fit_thresholds({"1": [(0.5, N), (0.0, R)]})


def test_per_topic_falls_back_below_the_minimum_of_relevant_documents():
    # Pooled: .9R .6R .5N .4R .3N -> F1 1/2, 4/5, 2/3, 6/7, 3/4: global 0.4.
    judged = {"A": [(0.9, R), (0.6, R), (0.3, N)], "B": [(0.4, R), (0.5, N)]}
    fit = rule_fit_thresholds(judged, scope="per-topic")
    assert fit.overall.threshold == 0.4
    assert fit.thresholds() == {"A": 0.6}
    assert fit.fallback == ("B",)
    one = rule_fit_thresholds(judged, scope="per-topic", min_relevant=1)
    assert one.thresholds() == {"A": 0.6, "B": 0.4}
    assert rule_fit_thresholds(judged).thresholds() == {}


def test_bad_scope_and_beta_are_refused():
    with pytest.raises(FitError, match="scope"):
        rule_fit_thresholds({"A": SIX}, scope="topic")
    with pytest.raises(FitError, match="beta"):
        threshold_fit(SIX, beta=0)


def _brute_force(pairs, beta):
    """Every candidate threshold counted from scratch; best F, then highest t."""
    relevant = sum(r for _, r in pairs)
    b2 = Fraction(beta) ** 2
    best = None
    for t in sorted({s for s, _ in pairs if s > 0}):
        tp = sum(1 for s, r in pairs if r and s >= t)
        fp = sum(1 for s, r in pairs if not r and s >= t)
        fn = relevant - tp
        f = Fraction(0) if tp == 0 else (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp)
        if best is None or f >= best[0]:
            best = (f, t)
    return best


SCORES = st.one_of(
    st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 1.0]),
    st.floats(min_value=0, max_value=1, allow_nan=False),
)


@settings(max_examples=300, deadline=None)
@given(
    pairs=st.lists(st.tuples(SCORES, st.booleans()), max_size=30),
    beta=st.sampled_from([0.5, 1.0, 2.0, 0.3]),
)
def test_fit_agrees_with_brute_force(pairs, beta):
    fit = threshold_fit(pairs, beta=beta)
    expected = _brute_force(pairs, beta)
    if not any(r for _, r in pairs) or expected is None:
        assert fit is None
        return
    assert fit.threshold == expected[1]
    assert Fraction(fit.f_beta) == pytest.approx(expected[0])


def test_fit_specs_parse_to_beta_and_scope():
    assert fit_spec_parse("f1") == (1.0, "global")
    assert fit_spec_parse("f0.5:per-topic") == (0.5, "per-topic")
    for bad in ("f", "f0", "g1", "f1:topic", "fnan", "f-1"):
        with pytest.raises(FitError, match="fB"):
            fit_spec_parse(bad)


def test_simulation_rules_parse_fitted_rules():
    assert rule_parse("fit:f1") == ("fit", 1.0)
    assert rule_parse("fit:f2:per-topic") == ("fit-per-topic", 2.0)
    with pytest.raises(DomainError, match="fit:fB"):
        rule_parse("fit:best")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), max_size=12))
def test_expected_f1_threshold_is_the_best_cut_by_brute_force(probs):
    fit = expected_f1_threshold(probs)
    total = sum(probs)
    best = 0.0
    for t in set(probs):
        chosen = [p for p in probs if p >= t]
        if t > 0 and total > 0:
            best = max(best, 2 * sum(chosen) / (len(chosen) + total))
    assert fit.expected_f1 == pytest.approx(best, abs=1e-12)
    if fit.inferred:
        assert fit.inferred == sum(1 for p in probs if p >= fit.threshold)
        assert fit.expected_tp == pytest.approx(
            sum(p for p in probs if p >= fit.threshold)
        )
