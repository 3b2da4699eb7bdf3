"""The shift study's tools: what a sample can see of R, against a brute-force count,
and the simulated-world bias, which must vanish where the estimator is exact."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.maths.estimators import beale_everywhere
from lab.studies.estimator_bias import (
    PI_BANDS,
    Spec,
    figures,
    options_parse,
    pooled_truth,
    redraw,
    sd_ratio,
    shared_error,
    topic_var_ratio,
    visibility,
)
from lab.studies.simulated_bias import simulated_bias
from lab.studies.synthetic_band import synthetic_band
from lab.studies.thinned_jackknife import extrapolated, thinned
from nuggets_app.ir.estimator import PLAIN, REPORTED
from nuggets_app.ir.model_assisted import model_assisted_evaluate
from nuggets_app.ir.prels import TopicPrels

DOCS = [f"d{i}" for i in range(10)]


@st.composite
def samples(draw):
    """Two topics: π and a label for each pooled document, p, and a drawn subset."""
    inputs = {"level": 1, "prels": {}, "crossfit": {}, "design": {}, "truth": {}}
    for qid in ("1", "2"):
        pool = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1))
        pis = {d: draw(st.floats(0.001, 1.0)) for d in pool}
        topic = TopicPrels(qid)
        for d in draw(st.lists(st.sampled_from(pool), unique=True)):
            topic.rel[d], topic.inclusion_prob[d] = 0, pis[d]
        inputs["prels"][qid] = topic
        inputs["design"][qid] = pis
        inputs["truth"][qid] = {d: draw(st.integers(0, 2)) for d in pool}
        inputs["crossfit"][qid] = {d: draw(st.floats(0.0, 1.0)) for d in pool}
    return inputs


@settings(max_examples=60, deadline=None)
@given(samples())
def test_visibility_counts_every_pooled_document_once_in_its_band(inputs):
    rows = visibility(inputs)
    assert len(rows) == len(PI_BANDS) - 1
    for row in rows:
        last = row is rows[-1]
        docs = [
            (qid, d, pi)
            for qid, design in inputs["design"].items()
            for d, pi in design.items()
            if row["low"] <= pi and (pi < row["high"] or (last and pi <= row["high"]))
        ]
        relevant = [(q, d, pi) for q, d, pi in docs if inputs["truth"][q][d] >= 1]
        assert row["docs"] == len(docs)
        assert row["relevant"] == len(relevant)
        assert row["expected"] == pytest.approx(sum(pi for *_, pi in relevant))
        drawn = [(q, d) for q, d, _ in relevant if d in inputs["prels"][q].rel]
        assert row["drawn"] == len(drawn)
        assert row["sum_p"] == pytest.approx(
            sum(inputs["crossfit"][q][d] for q, d, _ in docs)
        )
    shares = [row["var"] for row in rows]
    assert all(s >= 0 for s in shares)
    assert math.fsum(shares) == pytest.approx(1.0) or math.fsum(shares) == 0
    # The model's anticipated V(R̂) over V(R̂) under the labels, over every document.
    terms = [
        ((1 - pi) / pi, inputs["crossfit"][q][d], float(inputs["truth"][q][d] >= 1))
        for q, design in inputs["design"].items()
        for d, pi in design.items()
    ]
    actual = math.fsum(w * (y - p) ** 2 for w, p, y in terms) or 1.0
    anticipated = math.fsum(w * p * (1 - p) for w, p, _ in terms) / actual
    assert all(row["anticipated"] == pytest.approx(anticipated) for row in rows)


def test_a_model_that_knows_every_label_has_no_bias_in_any_world():
    """p = y: every residual is 0, so each replicate's estimate is the world's AP."""
    truth = {"1": {"a": 1, "b": 0, "c": 1, "d": 0}, "2": {"a": 0, "b": 1, "c": 0}}
    design = {q: {d: 0.5 for d in labels} for q, labels in truth.items()}
    prels = {}
    for qid, labels in truth.items():
        topic = TopicPrels(qid)
        topic.rel["b"], topic.inclusion_prob["b"] = labels["b"], 0.5
        topic.neu = topic.n_sampled = 1
        prels[qid] = topic
    probs = {q: {d: float(y) for d, y in labels.items()} for q, labels in truth.items()}
    runs = {"r": {q: {d: float(i) for i, d in enumerate(sorted(labels))}
                  for q, labels in truth.items()}}  # fmt: skip
    for world in ("truth", "raw"):
        bias = simulated_bias(
            prels, probs, design, runs, level=1, replicates=5,
            estimator=PLAIN, world=world, truth_labels=truth,
        )  # fmt: skip
        assert bias["r"] == pytest.approx({"1": 0.0, "2": 0.0}, abs=1e-12)


def test_sd_ratio_is_one_when_the_variance_is_the_spread_over_the_draws():
    values = [0.2, 0.4, 0.3, 0.5]
    spread = float(np.var(values))
    draws = [{"_estimates": {"r": v}, "_variances": {"r": spread}} for v in values]
    assert sd_ratio(draws) == pytest.approx(1.0)
    doubled = [{**d, "_variances": {"r": 4 * spread}} for d in draws]
    assert sd_ratio(doubled) == pytest.approx(2.0)


def test_topic_var_ratio_sums_over_runs_and_topics_and_the_thin_ones_apart():
    """Two runs on topic "a" (thin: 2 relevant judged) and "b" (not: 6), over four
    draws: the estimated variances sum to twice the spread on "a" and equal it on
    "b", so the thin ratio is 2 and the overall one is the ratio of the sums; a topic
    missing from a draw is left out."""
    a, b = [0.2, 0.4, 0.3, 0.5], [0.6, 0.7, 0.9, 0.8]
    va, vb = float(np.var(a)), float(np.var(b))
    draws = [
        {
            "_topics": {
                ("r1", "a"): (x, 2 * va), ("r2", "a"): (x, 2 * va),
                ("r1", "b"): (y, vb), ("r2", "b"): (y, vb),
            },
            "_relevant": {"a": 2, "b": 6},
        }
        for x, y in zip(a, b, strict=True)
    ]  # fmt: skip
    draws[0]["_topics"][("r1", "c")] = (0.5, 1.0)
    every, thin = topic_var_ratio(draws)
    assert thin == pytest.approx(2.0)
    assert every == pytest.approx((4 * va + 2 * vb) / (2 * va + 2 * vb))


@settings(max_examples=60, deadline=None)
@given(samples(), st.floats(0.01, 1.0))
def test_the_synthetic_band_predicts_its_undrawn_documents_from_the_other_topic(
    inputs, threshold
):
    prels, probs, design = inputs["prels"], inputs["crossfit"], inputs["design"]
    for topic in prels.values():  # the drawn documents' labels, as prels hold them
        for d in topic.rel:
            topic.rel[d] = inputs["truth"][topic.qid][d]
    band = synthetic_band(prels, probs, design, level=1, threshold=threshold)
    for qid, other in (("1", "2"), ("2", "1")):
        low = {d for d, pi in design[other].items() if pi < threshold}
        count = sum(
            float(prels[other].rel[d] >= 1) / design[other][d]
            for d in low & set(prels[other].rel)
        )
        mass = sum(probs[other][d] for d in low)
        c = count / mass if mass > 0 else 1.0
        for d, pi in design[qid].items():
            drawn = d in prels[qid].rel
            if pi >= threshold:
                assert band.design[qid][d] == pi
                assert band.probs[qid][d] == probs[qid][d]
                if drawn:
                    assert band.prels[qid].inclusion_prob[d] == pi
            elif drawn:  # known: its label, with no weight
                assert band.prels[qid].inclusion_prob[d] == 1.0
                assert band.design[qid][d] == 1.0
                assert band.probs[qid][d] == probs[qid][d]
            else:  # predicted: off the design, with the other topic's calibration
                assert d not in band.design[qid]
                assert d not in band.probs[qid]
                assert band.unsampled[qid][d] == pytest.approx(
                    min(1.0, c * probs[qid][d])
                )
        assert prels[qid].inclusion_prob == {
            d: design[qid][d] for d in prels[qid].rel
        }  # the caller's prels are left as they were


def test_the_allowance_stretches_the_interval_by_what_beale_moved():
    """``allow``: ``both`` widens each side by |uncorrected - corrected|, ``toward``
    only the side of the uncorrected ratio; within [0, 1]."""
    rng = np.random.default_rng(3)
    docs = [f"d{i}" for i in range(12)]
    inputs = {"level": 1, "prels": {}, "crossfit": {}, "design": {}, "truth": {},
              "pool": {}, "runs": {"a": {}, "b": {}}}  # fmt: skip
    for qid in ("1", "2", "3"):
        pis = {d: float(rng.uniform(0.05, 0.9)) for d in docs}
        truth = {d: int(rng.random() < 0.4) for d in docs}
        topic = TopicPrels(qid)
        for d in docs[::3]:
            topic.rel[d], topic.inclusion_prob[d] = truth[d], pis[d]
            topic.neu += 1
            topic.n_sampled += 1
        inputs["prels"][qid], inputs["design"][qid] = topic, pis
        inputs["truth"][qid], inputs["pool"][qid] = truth, set(docs)
        inputs["crossfit"][qid] = {d: float(rng.uniform(0.1, 0.7)) for d in docs}
        for run in ("a", "b"):
            inputs["runs"][run][qid] = {d: float(rng.random()) for d in docs}
    found = {
        beale: model_assisted_evaluate(
            inputs["prels"], inputs["crossfit"], inputs["runs"], level=1,
            design=inputs["design"],
            estimator=replace(REPORTED, beale=beale_everywhere if beale else None),
        )
        for beale in (True, False)
    }  # fmt: skip
    per_topic = pooled_truth(inputs)
    args = (inputs, inputs["prels"], inputs["crossfit"])
    moved_any = False
    for allow in ("both", "toward"):
        halves = []
        for run in ("a", "b"):
            ap = found[True][run]["AP"]
            moved = found[False][run]["AP"].estimate - ap.estimate
            moved_any |= moved != 0
            below, above = (abs(moved),) * 2 if allow == "both" else (
                max(-moved, 0.0), max(moved, 0.0))  # fmt: skip
            lo, hi = ap.ci95
            halves.append((min(hi + above, 1.0) - max(lo - below, 0.0)) / 2)
        stretched = figures(*args, Spec(allow=allow), per_topic)
        assert stretched["half"] == pytest.approx(np.mean(halves))
        assert stretched["half"] > figures(*args, Spec(), per_topic)["half"]
    assert moved_any


@settings(max_examples=60, deadline=None)
@given(samples(), st.floats(0.05, 0.95), st.integers(0, 2**32 - 1))
def test_a_thinned_sample_is_a_sample_of_the_design_rho_pi(inputs, rho, seed):
    kept = thinned(inputs["prels"], rho, np.random.default_rng(seed))
    for qid, topic in inputs["prels"].items():
        part = kept[qid]
        assert set(part.rel) <= set(topic.rel)
        for d in part.rel:
            assert part.rel[d] == topic.rel[d]
            assert part.inclusion_prob[d] == pytest.approx(
                rho * topic.inclusion_prob[d]
            )
        assert part.n_sampled == len(part.rel)


def test_thinning_keeps_each_drawn_document_with_probability_rho():
    topic = TopicPrels("1")
    for i in range(400):
        topic.rel[f"d{i}"], topic.inclusion_prob[f"d{i}"] = i % 2, 0.5
    topic.neu = topic.n_sampled = 400
    rng = np.random.default_rng(3)
    sizes = [len(thinned({"1": topic}, 0.3, rng)["1"].rel) for _ in range(200)]
    # 200 x 400 Bernoulli(0.3) draws: the mean is within 4 standard errors of 120.
    assert abs(np.mean(sizes) - 120) < 4 * math.sqrt(400 * 0.3 * 0.7 / 200)


@given(st.floats(0, 1), st.floats(-1, 1), st.floats(0.05, 0.95))
def test_the_extrapolation_removes_a_bias_proportional_to_one_over_n(theta, b, rho):
    # An estimate at n has expectation θ + b/n; thinned to rho n, θ + b/(rho n) (n = 1 here).
    assert extrapolated(theta + b, theta + b / rho, rho) == pytest.approx(
        theta, abs=1e-9
    )


def test_a_redraw_with_twice_the_draws_recomputes_every_pi():
    q = {f"d{i}": w for i, w in enumerate((0.5, 0.3, 0.15, 0.05))}
    k = 3
    design = {d: 1 - (1 - w) ** k for d, w in q.items()}
    topic = TopicPrels("1")
    topic.rel["d0"], topic.inclusion_prob["d0"] = 1, design["d0"]
    inputs = {"level": 1, "prels": {"1": topic}, "design": {"1": design},
              "truth": {"1": {"d0": 1, "d3": 1}}}  # fmt: skip
    prels, drawn = redraw(inputs, np.random.default_rng(1), 2.0)
    assert drawn["1"] == pytest.approx(
        {d: 1 - (1 - w) ** (2 * k) for d, w in q.items()}
    )
    assert 1 <= len(prels["1"].rel) <= 2 * k
    for d, grade in prels["1"].rel.items():
        assert grade == inputs["truth"]["1"].get(d, 0)
        assert prels["1"].inclusion_prob[d] == drawn["1"][d]


@pytest.mark.parametrize(("shared", "own"), [(0.017, 0.013), (0.034, 0.014)])
def test_the_shared_error_predicts_how_often_a_sample_covers_under_three_quarters(
    shared, own
):
    # Brute force: samples whose runs share an error c and add their own, each run's
    # interval the calibrated 95% one (times the factor for the second check).
    rng = np.random.default_rng(5)
    c = rng.normal(0, shared, 20000)
    e = rng.normal(0, own, (20000, 1000))
    found = shared_error(list(c), list(e.std(axis=1)))
    s = math.hypot(shared, own)
    for width, expected in (
        (1.0, found["below"]),
        (found["factor"], 1 - 0.9 ** (1 / 20)),
    ):
        covered = (np.abs(c[:, None] + e) <= width * 1.96 * s).mean(axis=1)
        observed = float(np.mean(covered < 0.75))
        assert observed == pytest.approx(
            expected, abs=4 * math.sqrt(expected / 20000) + 0.002
        )


def test_an_option_set_is_an_estimator_value_and_the_studys_own_options():
    name, spec = options_parse("noBeale=beale:false,pboot:20,world:truth,zero:true")
    assert name == "noBeale"
    assert spec == Spec(
        estimator=replace(REPORTED, beale=None), pboot=20, world="truth", zero=True
    )
    assert options_parse("reported=") == ("reported", Spec())
    with pytest.raises(SystemExit, match="unknown options shrinkvar"):
        options_parse("shrink=shrinkvar:true")
