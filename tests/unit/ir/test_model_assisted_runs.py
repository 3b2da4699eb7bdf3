"""The model-assisted estimator over runs: graded nDCG, averages over topics, the bias
check, bad inputs and the worked example of docs/explanation/model-assisted.md."""

from __future__ import annotations

import math
import random

import ir_measures
import pytest

from nuggets_app.ir.bias_check import bias_check
from nuggets_app.ir.estimator import PLAIN, power_tuning
from nuggets_app.ir.model_assisted import (
    DEFAULT_ESTIMATOR,
    ESTIMATORS,
    GradeModel,
    ModelAssistedError,
    model_assisted_evaluate,
    topic_estimates,
    topic_sample,
)
from nuggets_app.ir.sampling import (
    draw_statap,
    inclusion_probabilities,
    pool_distribution,
)
from nuggets_app.ir.statap import statap_evaluate
from tests.unit.ir.estimators import TUNED
from tests.unit.ir.test_model_assisted import (
    EXACT,
    RUNS,
    prels_of,
)

# Graded nDCG, runs, bias check, errors -------------------------------------------


def test_a_perfect_grade_model_gives_trec_evals_ndcg():
    grade = {"a": 3, "b": 0, "c": 1, "d": 2, "e": 0, "f": 1, "g": 3}
    pi = {"a": 0.5, "d": 0.3, "e": 0.9}
    topic = prels_of({d: grade[d] for d in pi}, pi)
    at_least = {d: tuple(float(g >= lv) for lv in (1, 2, 3)) for d, g in grade.items()}
    model = GradeModel({"1": at_least}, (0, 1, 2, 3))
    ranking = ["c", "a", "b", "g", "e", "d"]
    got = topic_estimates(
        topic_sample(topic, {}, cutoff=5, grades=model, estimator=TUNED), ranking
    )
    run = {"1": {d: 10.0 - i for i, d in enumerate(ranking)}}
    want = ir_measures.calc_aggregate([ir_measures.nDCG @ 5], {"1": grade}, run)
    assert got["nDCG@5"].estimate == pytest.approx(want[ir_measures.nDCG @ 5], abs=1e-9)
    assert got["nDCG@5"].var == pytest.approx(0.0, abs=EXACT)


def scores_of(ranking):
    return {d: float(len(ranking) - i) for i, d in enumerate(ranking)}


def test_runs_are_averaged_over_valid_topics_the_run_answers():
    pi = {"a": 0.5, "b": 0.4}
    prels = {
        "1": prels_of({"a": 1, "b": 0}, pi, "1"),
        "2": prels_of({"a": 0, "b": 0}, pi, "2"),  # R̂ = 0: not valid
        "3": prels_of({"a": 1}, {"a": 0.5}, "3"),  # not answered by the run
    }
    runs = {"r": {"1": scores_of(["a", "b"]), "2": scores_of(["a"])}}
    result = model_assisted_evaluate(
        prels, {"1": {"a": 0.5, "b": 0.5}}, runs, estimator=PLAIN
    )["r"]
    assert result["R"].n_topics == 1
    (topic,) = result["R"].topics
    assert topic.estimate == pytest.approx(1 + 0.5 / 0.5 - 0.5 / 0.4, abs=EXACT)
    assert topic.var == pytest.approx(0.5 / 0.25 * 0.25 + 0.6 / 0.16 * 0.25, abs=EXACT)
    assert result["R"].ci95 == pytest.approx(
        (
            topic.estimate - 1.96 * math.sqrt(topic.var),
            topic.estimate + 1.96 * math.sqrt(topic.var),
        )
    )


def test_the_bias_check_flags_a_model_that_overrates_one_run():
    """A perfect model has no correction at all; a model that calls everything run B
    retrieves relevant is flagged for B, whose statAP disagrees."""
    rng = random.Random(5)
    docs = [f"d{i}" for i in range(60)]
    truth = {d: int(i % 3 == 0) for i, d in enumerate(docs)}
    lists = {"A": docs[:30], "B": docs[30:]}
    runs = {n: {str(t): scores_of(lst) for t in range(8)} for n, lst in lists.items()}
    prels = {}
    for t in range(8):
        draw = draw_statap(pool_distribution(lists), 25, rng)
        prels[str(t)] = prels_of(
            {d: truth[d] for d in draw.order}, draw.inclusion, str(t)
        )
    perfect = {str(t): {d: float(y) for d, y in truth.items()} for t in range(8)}
    for check in bias_check(prels, perfect, runs, estimator=TUNED):
        assert check.correction == pytest.approx(0.0, abs=EXACT)
        assert check.model_assisted == pytest.approx(check.eap, abs=EXACT)
    biased = {
        str(t): {d: 0.9 if d in lists["B"] else truth[d] for d in docs}
        for t in range(8)
    }
    checks = {c.run: c for c in bias_check(prels, biased, runs, estimator=TUNED)}
    assert checks["B"].flagged
    assert checks["B"].diff > 0
    assert checks["B"].ci95[0] > 0


def test_bad_inputs_are_named():
    topic = prels_of({"a": 1}, {"a": 0.5})
    with pytest.raises(ModelAssistedError, match=r"p\(a\) = 1.5"):
        topic_sample(topic, {"a": 1.5}, estimator=TUNED)
    with pytest.raises(ModelAssistedError, match="not decrease"):
        topic_sample(topic, {}, grades=GradeModel({}, (0, 2, 1)), estimator=TUNED)
    with pytest.raises(ModelAssistedError, match="b needs 2 non-increasing"):
        topic_sample(
            topic,
            {},
            grades=GradeModel({"1": {"b": (0.2, 0.5)}}, (0, 1, 2)),
            estimator=TUNED,
        )
    with pytest.raises(ModelAssistedError, match="cutoff"):
        topic_sample(topic, {}, cutoff=0, estimator=TUNED)


def test_the_default_estimator_is_model_assisted():
    assert DEFAULT_ESTIMATOR == "model_assisted"
    assert ESTIMATORS == ("sample_only", "statap", "eap", "model_assisted")


def test_the_worked_example_of_the_explanation_page():
    """docs/explanation/model-assisted.md: the pool of docs/reference/algorithms.md 1.5, K = 3,
    sample {a, c, d}, the model p below; every number on the page, to 1e-6."""
    q = pool_distribution(RUNS)
    pi = inclusion_probabilities(q, 3)
    topic = prels_of({"a": 1, "c": 0, "d": 1}, pi)
    p = {"a": 0.8, "b": 0.6, "c": 0.5, "d": 0.2, "e": 0.3}
    prepared = topic_sample(topic, p, cutoff=3, estimator=TUNED)
    assert power_tuning(topic, p) == prepared.scale == 1.0  # λ̂ = 3.25, clipped
    assert prepared.est_r == pytest.approx(5.664170, abs=1e-6)
    assert prepared.var_r == pytest.approx(10.862479, abs=1e-6)
    run1 = topic_estimates(prepared, RUNS["run1"])
    assert run1["AP"].estimate == pytest.approx(0.692071, abs=1e-6)
    assert run1["AP"].var == pytest.approx(0.009737, abs=1e-6)
    assert run1["AP"].ci95 == pytest.approx((0.498667, 0.885475), abs=1e-6)
    assert run1["P@3"].estimate == pytest.approx(0.489908, abs=1e-6)
    assert run1["Rprec"].estimate == pytest.approx(0.947035, abs=1e-6)
    assert run1["nDCG@3"].estimate == pytest.approx(0.634645, abs=1e-6)
    run2 = topic_estimates(prepared, RUNS["run2"])
    assert run2["AP"].estimate == pytest.approx(0.071594, abs=1e-6)
    assert run2["AP"].var == pytest.approx(0.013120, abs=1e-6)
    assert run2["P@3"].estimate == pytest.approx(0.389908, abs=1e-6)
    assert run2["nDCG@3"].estimate == pytest.approx(0.291841, abs=1e-6)
    zero = topic_sample(topic, {}, cutoff=3, estimator=TUNED)
    assert zero.est_r == pytest.approx(6.007691, abs=1e-6)
    statap1 = topic_estimates(zero, RUNS["run1"])["AP"]
    assert statap1.estimate == pytest.approx(0.690532, abs=1e-6)
    assert statap1.var == pytest.approx(0.036167, abs=1e-6)
    scores = {n: {"1": scores_of(r)} for n, r in RUNS.items()}
    assert statap_evaluate({"1": topic}, scores["run1"]).topics[0].var == (
        pytest.approx(0.055448, abs=1e-6)
    )
    checks = {
        c.run: c for c in bias_check({"1": topic}, {"1": p}, scores, estimator=TUNED)
    }
    one, two = checks["run1"], checks["run2"]
    assert (one.eap, one.raw_diff) == pytest.approx((0.775862, 0.085330), abs=1e-6)
    assert one.shift == pytest.approx(1.261794, abs=1e-6)
    assert one.diff == pytest.approx(-0.095447, abs=1e-6)
    assert one.ci95 == pytest.approx((-0.565775, 0.374881), abs=1e-6)
    assert one.correction == pytest.approx(-0.083791, abs=1e-6)
    assert one.correction_ci95 == pytest.approx((-0.277195, 0.109613), abs=1e-6)
    assert not one.flagged
    assert (two.statap, two.eap) == pytest.approx((0.115655, 0.241379), abs=1e-6)
    assert two.raw_diff == pytest.approx(0.125725, abs=1e-6)
    assert two.diff == pytest.approx(0.095447, abs=1e-6)
    assert two.ci95 == pytest.approx((-0.131330, 0.322224), abs=1e-6)
    assert not two.flagged
    assert two.correction == pytest.approx(-0.169786, abs=1e-6)
