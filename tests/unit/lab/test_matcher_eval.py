"""The matcher-evaluation measures on small cases computed by hand."""

import math

import pytest

from lab.maths.matcher_eval import (
    GoldNugget,
    Unit,
    candidate_pairs,
    match_quality,
    minspan_scores,
    recall_by,
    unit_gold,
    unit_scores,
)

A, B, C, D = ("q", "u1", "n1"), ("q", "u1", "n2"), ("q", "u2", "n1"), ("q", "u3", "n1")


def test_ap_best_f1_and_threshold_points_by_hand():
    # Ranked: A 0.9 (gold), B 0.8, C 0.5 (gold); D is gold but scores 0.
    scores = {A: 0.9, B: 0.8, C: 0.5, D: 0.0}
    quality = match_quality(scores, {A, C, D}, pairs=6, thresholds=(0.6, 0.95))
    assert quality.average_precision == pytest.approx((1 / 1 + 2 / 3) / 3)
    # F1 at 0.9: 2*1*(1/3)/(4/3) = 0.5; at 0.8: 0.4; at 0.5: P = R = 2/3.
    assert quality.best_f1 == pytest.approx(2 / 3)
    assert quality.best_threshold == 0.5
    assert (quality.best_precision, quality.best_recall) == pytest.approx(
        (2 / 3, 2 / 3)
    )
    at_06, at_095 = quality.points
    assert (at_06.predicted, at_06.true_positives) == (2, 1)
    assert (at_06.precision, at_06.recall) == pytest.approx((0.5, 1 / 3))
    assert at_06.f1 == pytest.approx(0.4)
    assert (at_095.predicted, at_095.precision, at_095.recall, at_095.f1) == (
        0,
        1.0,
        0.0,
        0.0,
    )
    assert (quality.gold, quality.scored, quality.pairs) == (3, 3, 6)


def test_ties_count_together_at_a_threshold():
    # Both pairs score 0.7: the threshold takes both, F1 = 2*(1/2)*1/(3/2) = 2/3.
    quality = match_quality({A: 0.7, B: 0.7}, {A}, pairs=2)
    assert quality.best_f1 == pytest.approx(2 / 3)
    assert quality.best_threshold == 0.7


def test_no_gold_gives_nan_ap():
    assert math.isnan(match_quality({A: 0.5}, set(), pairs=1).average_precision)


def test_unit_level_takes_the_best_pair_of_each_unit():
    scores = {A: 0.9, B: 0.2, C: 0.3}
    assert unit_scores(scores) == {("q", "u1", ""): 0.9, ("q", "u2", ""): 0.3}
    assert unit_gold({A, B, D}) == {("q", "u1", ""), ("q", "u3", "")}


def test_minspan_scores_by_hand():
    # "john kennedy elected president usa", k=3: three shingles (john kennedy
    # elect), (kennedy elect presid), (elect presid usa). The first unit holds the
    # first two as contiguous windows (S = k: score 1 each) and lacks "usa": 2/3
    # for any lambda. In the second unit the first shingle's smallest window is
    # john met kennedy lincoln elect ("then", "who", "was" are stopwords and
    # leave no term): S = 5, score lam ** ((5 - 3) / 3); the other two shingles
    # are missing: (lam ** (2/3)) / 3.
    units = [
        Unit("u1", "q", "John Kennedy elected president"),
        Unit("u2", "q", "John met Kennedy, then Lincoln, who was elected"),
        Unit("u3", "q", "nothing relevant here at all"),
        Unit("u4", "other", "John Kennedy elected president"),
    ]
    nuggets = [GoldNugget("n1", "q", "John Kennedy elected president USA", 3)]
    scores = minspan_scores(units, nuggets, k=3, lams=[0.5, 0.8])
    assert scores[0.5][("q", "u1", "n1")] == pytest.approx(2 / 3)
    assert scores[0.8][("q", "u1", "n1")] == pytest.approx(2 / 3)
    assert scores[0.5][("q", "u2", "n1")] == pytest.approx(0.5 ** (2 / 3) / 3)
    assert scores[0.8][("q", "u2", "n1")] == pytest.approx(0.8 ** (2 / 3) / 3)
    assert ("q", "u3", "n1") not in scores[0.5]
    assert candidate_pairs(units, nuggets) == 3


def test_recall_by_bucket():
    result = recall_by({A, C, D}, {A}, {A: "short", C: "short", D: "long"})
    assert result == {"long": (1, 0, 0.0), "short": (2, 1, 0.5)}
