"""Estimator variants under study (lab.maths.estimators): values of the product's
Estimator, measured and not reported.

Beale's correction of AP's ratio bias rests on the second-order expansion of 1/R̂
around R, which converges only for ``|R̂ - R| < R``. ``BEALE_CV`` applies it only
where ``sqrt(V̂_R)/R̂ <= 1/2``; ``beale_unfloored`` only where R̂ was not raised to
its floor (docs/explanation/model-assisted.md, "Where Beale's expansion holds").
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import replace

import pytest

from lab.maths.estimators import (
    BEALE_CV,
    BealeCV,
    beale_everywhere,
    beale_unfloored,
    estimator_parse,
    full_tuning,
)
from nuggets_app.ir.beale import beale_span
from nuggets_app.ir.estimator import PLAIN, REPORTED, Estimator, power_tuning
from nuggets_app.ir.model_assisted import model_assisted_evaluate, topic_sample
from tests.unit.ir.test_model_assisted_shift import (
    _floor_world,
    _sample,
    _true_map,
    _world,
)

BOUNDED = Estimator(beale=None, interval="linearised")


def test_beale_within_its_convergence_region_keeps_no_shift_where_everywhere_had_one():
    """Over 150 statAP samples (15 draws per topic) of the same pools, with the same
    model: the mean over samples of (the runs' mean estimate - their mean true MAP)
    is -0.096 (standard error 0.004) with Beale's correction on every topic and
    within about 0.01 with it where R̂'s coefficient of variation is at most 1/2
    (measured: -0.001, standard error 0.006)."""
    rng = random.Random(5)
    runs, pools, truth, probs = _world(rng)
    true_map = {name: _true_map(run, truth) for name, run in runs.items()}
    shifts: dict[object, list[float]] = {beale_everywhere: [], BEALE_CV: []}
    for _ in range(150):
        prels = _sample(pools, truth, rng)
        for rule, found in shifts.items():
            estimator = replace(REPORTED, beale=rule)
            got = model_assisted_evaluate(prels, probs, runs, estimator=estimator)
            found.append(
                statistics.fmean(got[n]["AP"].estimate - true_map[n] for n in runs)
            )
    everywhere, guarded = (
        statistics.fmean(shifts[k]) for k in (beale_everywhere, BEALE_CV)
    )
    error = statistics.stdev(shifts[BEALE_CV]) / math.sqrt(150)
    assert everywhere < -0.06
    assert abs(guarded) < max(3 * error, 0.01) + 0.01


@pytest.mark.parametrize(
    ("est_r", "var_r", "corrects"),
    [
        (10.0, 25.0, True),  # coefficient of variation 1/2: inside
        (10.0, 25.01, False),
    ],
)
def test_the_cv_rule_corrects_where_the_expansion_of_one_over_r_holds(
    est_r, var_r, corrects
):
    assert BEALE_CV(est_r, var_r, floored=False).corrects is corrects
    assert not BEALE_CV(est_r, var_r, floored=False).spans
    assert beale_everywhere(est_r, var_r, floored=False).corrects


@pytest.mark.parametrize(("floored", "corrects"), [(True, False), (False, True)])
def test_the_unfloored_rule_skips_beale_where_r_was_raised_to_its_floor(
    floored, corrects
):
    assert beale_unfloored(5.0, 400.0, floored=floored).corrects is corrects
    assert beale_everywhere(5.0, 400.0, floored=floored).corrects is True


def test_a_floored_topic_keeps_the_plain_ratio_under_the_unfloored_rule():
    """Topic 1 of the floor test: R̂ = -7.4 is raised to 1, the one relevant judged
    document. With ``beale_unfloored`` its AP is the plain N̂/1 (the
    denominator is the constant floor, not R̂), here clipped to 0; Beale's
    correction, which every topic gets with ``beale_everywhere``, would move it to near
    Ĉ/V̂_R, set by the sample's (huge) V̂_R. Topic 2 is not floored and gets Beale's
    correction under both."""
    prels, probs = _floor_world()
    runs = {"run": {"1": {"c": 3.0, "a": 2.0, "b": 1.0}, "2": {"z": 2.0, "x": 1.0}}}
    assert topic_sample(prels["1"], probs["1"], estimator=REPORTED).floored
    assert not topic_sample(prels["2"], probs["2"], estimator=REPORTED).floored

    def per_topic(rule):
        estimator = replace(BOUNDED, beale=rule)
        found = model_assisted_evaluate(prels, probs, runs, estimator=estimator)
        return {t.qid: t.estimate for t in found["run"]["AP"].topics}

    plain, beale = per_topic(None), per_topic(beale_everywhere)
    rule = per_topic(beale_unfloored)
    assert rule["1"] == plain["1"]
    assert plain["1"] == 0.0 < beale["1"]
    assert rule["2"] == beale["2"] != plain["2"]


def test_the_command_line_options_make_estimator_values():
    """``key:value`` options of the studies: the reported estimator with one field
    replaced; ``lam:full`` tunes with λ̂ itself, and only where p is tuned."""
    assert estimator_parse({}) == REPORTED
    assert estimator_parse({"beale": "span"}) == REPORTED
    assert estimator_parse({"beale": "false"}).beale is None
    assert estimator_parse({"beale": "0.25"}).beale == BealeCV(0.25)
    assert estimator_parse({"beale": "unfloored"}).beale is beale_unfloored
    assert (
        estimator_parse(
            {
                "beale": "false",
                "tune": "false",
                "bounded": "false",
                "interval": "linearised",
            }
        )
        == PLAIN
    )
    assert estimator_parse({"lam": "full"}).tuning is full_tuning
    assert estimator_parse({"lam": "full", "tune": "false"}).tuning is None
    assert estimator_parse({"tune": "true"}).tuning is power_tuning
    assert REPORTED.beale is beale_span


def test_full_tuning_is_lambda_hat_itself():
    """``(1 + λ̂)/2 = λ``, so λ̂ = 2 λ - 1: on topic 2 of the floor world, where the
    sample says something (λ < 1), the full tuning scales p by λ̂."""
    prels, probs = _floor_world()
    lam = power_tuning(prels["2"], probs["2"])
    full = replace(REPORTED, tuning=full_tuning)
    assert topic_sample(prels["2"], probs["2"], estimator=full).scale == pytest.approx(
        2 * lam - 1
    )
