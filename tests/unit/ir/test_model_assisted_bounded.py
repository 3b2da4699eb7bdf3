"""Bounded model-assisted estimates: per-topic values of AP, R-prec, P@k and nDCG in
[0, 1] with variance at most 1/4, run intervals inside [0, 1], R left alone."""

from __future__ import annotations

import math

import pytest

from nuggets_app.ir.bias_check import bias_check
from nuggets_app.ir.model_assisted import model_assisted_evaluate
from nuggets_app.ir.run_intervals import BOUNDED_VAR, TopicEstimate, topic_bounded
from tests.unit.ir.estimators import BOUNDED, TUNED
from tests.unit.ir.test_model_assisted import tiny_inputs


def test_a_topic_is_clipped_to_the_measures_range_and_r_is_left_alone():
    found = {
        "AP": TopicEstimate("1", 1.9, 31.8, 7.3),
        "Rprec": TopicEstimate("1", -0.2, 0.01, 7.3),
        "P@30": TopicEstimate("1", 0.4, 0.02, 7.3),
        "nDCG@30": TopicEstimate("1", math.nan, math.nan, 7.3),
        "R": TopicEstimate("1", 7.3, 40.0, 7.3),
    }
    bounded = topic_bounded(found)
    assert (bounded["AP"].estimate, bounded["AP"].var) == (1.0, BOUNDED_VAR)
    assert (bounded["Rprec"].estimate, bounded["Rprec"].var) == (0.0, 0.01)
    assert bounded["P@30"] == found["P@30"]
    assert math.isnan(bounded["nDCG@30"].estimate)
    assert bounded["R"] == found["R"]
    assert BOUNDED_VAR == 0.25  # the largest variance of a [0, 1]-valued estimate


def test_bounded_statap_clips_the_reference_vectors_topic_above_one():
    prels, run = tiny_inputs()
    plain = model_assisted_evaluate(prels, {}, {"tiny": run}, estimator=TUNED)["tiny"][
        "AP"
    ]
    bounded = model_assisted_evaluate(prels, {}, {"tiny": run}, estimator=BOUNDED)[
        "tiny"
    ]
    # docs/reference/algorithms.md 2.10: statAP 0.446 and 1.0833 on the two topics.
    assert [t.estimate for t in plain.topics] == pytest.approx([0.446, 1.0833333333])
    assert [t.estimate for t in bounded["AP"].topics] == pytest.approx([0.446, 1.0])
    assert bounded["AP"].estimate == pytest.approx((0.446 + 1.0) / 2)
    for measure, estimate in bounded.items():
        low, high = estimate.ci95
        if measure == "R":
            assert estimate.ci95 == plain_ci(prels, run, "R")
        else:
            assert 0.0 <= low <= estimate.estimate <= high <= 1.0
    checks = bias_check(prels, {}, {"tiny": run}, estimator=BOUNDED)
    assert checks[0].model_assisted == pytest.approx(bounded["AP"].estimate)


def plain_ci(prels, run, measure):
    return model_assisted_evaluate(prels, {}, {"tiny": run}, estimator=TUNED)["tiny"][
        measure
    ].ci95
