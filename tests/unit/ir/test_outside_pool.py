"""Documents outside the pool (nuggets_app.ir.outside_pool): which pooled documents
stand for a new run's, the calibration ratio and its shrinkage, the model's error in
a new run's interval, and the top-up design's unbiased correction."""

from __future__ import annotations

import math
import random

import pytest

from nuggets_app.ir.estimator import PLAIN
from nuggets_app.ir.model_assisted import (
    model_assisted_evaluate,
    topic_estimates,
    topic_sample,
)
from nuggets_app.ir.outside_pool import (
    Calibration,
    Evidence,
    OutsidePoolError,
    calibration_estimate,
    contributors,
    draws_for_width,
    run_interval,
    top_up_distribution,
    top_up_draw,
    top_up_prels,
    topic_error,
    unique_documents,
)
from nuggets_app.ir.prels import TopicPrels
from nuggets_app.ir.run_intervals import (
    NAN,
    RunEstimate,
    TopicEstimate,
    interval95,
    run_estimate,
)
from nuggets_app.ir.sampling import ap_prior_weights


def _prels(qid: str, judged: dict[str, tuple[int, float]]) -> TopicPrels:
    return TopicPrels(
        qid=qid,
        rel={d: r for d, (r, _) in judged.items()},
        inclusion_prob={d: pi for d, (_, pi) in judged.items()},
        neu=len(judged),
        n_sampled=len(judged),
    )


def test_unique_documents_are_those_one_group_alone_ranks_within_the_depth():
    rankings = {
        "a-1": {"1": ["x", "y", "z"]},
        "a-2": {"1": ["y", "w"]},
        "b-1": {"1": ["x", "v", "u"]},
    }
    of = contributors(rankings, {"a-1": "a", "a-2": "a", "b-1": "b"})
    assert unique_documents(rankings, of, depth=2) == {
        "1": {"y": "a", "w": "a", "v": "b"}
    }
    # One group only: every run stands alone, as a group would.
    alone = contributors(rankings, dict.fromkeys(rankings, "demo"))
    assert alone == {n: n for n in rankings}
    assert unique_documents(rankings, alone, depth=2)["1"] == {"w": "a-2", "v": "b-1"}


def test_the_ratio_is_the_design_ratio_shrunk_towards_one_by_the_prior():
    unique = {"1": {f"d{i}": "g" for i in range(6)}}
    probs = {"1": {f"d{i}": 0.5 for i in range(6)}}
    judged = {"1": _prels("1", {"d0": (1, 0.5), "d1": (0, 0.5), "d2": (0, 0.25)})}
    cal = calibration_estimate(unique=unique, probs=probs, judged=judged, prior=1.0)
    ev = cal.evidence
    assert (ev.documents, ev.judged, ev.judged_relevant) == (6, 3, 1)
    assert ev.weighted_relevant == pytest.approx(2.0)  # 1/0.5
    assert ev.weighted_p == pytest.approx(0.5 * (2 + 2 + 4))
    assert ev.raw_ratio == pytest.approx(0.5)
    # Kish: w = (2, 2, 4), n_e = 64/24, w' = w n_e / 8.
    scale = (8 / 24) * 1.0
    assert ev.eff_relevant == pytest.approx(2 * scale)
    assert ev.eff_p == pytest.approx(4 * scale)
    assert cal.ratio == pytest.approx((1 + 2 * scale) / (1 + 4 * scale))
    assert cal.var == pytest.approx((1 + 2 * scale) / (1 + 4 * scale) ** 2)
    assert cal.shrinkage == pytest.approx(1 / (1 + 4 * scale))
    assert cal.apply(0.9) == pytest.approx(min(1.0, cal.ratio * 0.9))
    # Nothing judged: the model's own calibration, with the prior's variance.
    none = calibration_estimate(unique=unique, probs=probs, judged={}, prior=2.0)
    assert (none.ratio, none.var) == (1.0, 0.5)
    with pytest.raises(OutsidePoolError, match="prior"):
        calibration_estimate(unique=unique, probs=probs, judged={}, prior=0)


def test_a_model_that_doubles_the_truth_is_calibrated_back_from_a_large_sample():
    rng = random.Random(3)
    unique, probs, truth = {}, {}, {}
    for t in range(40):
        qid = str(t)
        docs = {f"d{i}": rng.uniform(0.05, 0.5) for i in range(200)}
        probs[qid] = docs
        unique[qid] = dict.fromkeys(docs, "g")
        truth[qid] = {d: int(rng.random() < p / 2) for d, p in docs.items()}
    judged = {}
    for qid, docs in probs.items():
        pis = {d: 0.2 + 0.6 * (i % 3) / 2 for i, d in enumerate(docs)}
        drawn = {d: (truth[qid][d], pi) for d, pi in pis.items() if rng.random() < pi}
        judged[qid] = _prels(qid, drawn)
    cal = calibration_estimate(unique=unique, probs=probs, judged=judged)
    assert abs(cal.ratio - 0.5) < 3 * math.sqrt(cal.var)
    assert math.sqrt(cal.var) < 0.05


def _topic():
    """A pool of 6 judged documents, and a new run with 4 unpooled ones (u*)."""
    pooled = {f"p{i}": (int(i < 2), 0.5) for i in range(6)}
    judged = _prels("1", pooled)
    probs = {f"p{i}": 0.4 for i in range(6)}
    raw = {"u1": 0.6, "u2": 0.3, "u3": 0.2, "u4": 0.1}
    ranking = ["u1", "p0", "u2", "p1", "u3", "p2", "u4", "p3"]
    return judged, probs, raw, ranking


def test_the_models_error_widens_a_new_runs_interval_and_says_its_share():
    judged, probs, raw, ranking = _topic()
    cal = calibration_estimate(
        unique={"1": {"p4": "g", "p5": "g"}}, probs={"1": probs}, judged={"1": judged}
    )
    q = {d: cal.apply(p) for d, p in raw.items()}
    sample = topic_sample(judged, probs, unsampled=q, estimator=PLAIN)
    ap = topic_estimates(sample, ranking)["AP"].estimate
    error, plan = topic_error(sample, ranking, raw=raw, ap=ap, calibration=cal)
    assert error.documents == 4
    assert error.expected_relevant == pytest.approx(sum(q.values()))
    assert error.var_documents > 0
    # The slope is ∂AP/∂θ: a finite difference of the estimate in θ agrees.
    step = 1e-6
    moved = topic_sample(
        judged, probs, unsampled={d: (cal.ratio + step) * p for d, p in raw.items()},
        estimator=PLAIN,
    )  # fmt: skip
    numeric = (topic_estimates(moved, ranking)["AP"].estimate - ap) / step
    assert error.slope == pytest.approx(numeric, rel=1e-3)
    assert list(plan[2]) == ["u1", "u2", "u3", "u4"]
    found = model_assisted_evaluate(
        {"1": judged}, {"1": probs}, {"run": {"1": {d: -i for i, d in enumerate(ranking)}}},
        unsampled={"1": q}, estimator=PLAIN,
    )["run"]["AP"]  # fmt: skip
    parts = run_interval(found, {"1": error}, cal)
    assert parts.var_sampling == found.var
    assert parts.var_documents == pytest.approx(error.var_documents)
    assert parts.var_calibration == pytest.approx(error.slope**2 * cal.var)
    low, high = parts.ci95
    assert low < found.ci95[0] or high > found.ci95[1]
    assert 0 < parts.model_share < 1
    # A wide enough target is met by a top-up; the draws found are the fewest.
    target = 1.96 * math.sqrt(parts.var_sampling) + 0.01
    found_k = draws_for_width(target, parts.var_sampling, 1, {"1": plan})
    assert found_k is not None
    k, judged_per_topic = found_k
    assert 0 < judged_per_topic <= min(k, 4)
    if k > 1:
        assert (
            draws_for_width(target, parts.var_sampling, 1, {"1": plan}, most=k - 1)
            is None
        )
    assert (
        draws_for_width(
            0.5 * math.sqrt(parts.var_sampling), parts.var_sampling, 1, {"1": plan}
        )
        is None
    )


def test_the_top_up_design_follows_the_runs_ranks_and_corrects_without_bias():
    ranking = [f"d{i}" for i in range(20)]
    unpooled = ranking[::3]
    dist = top_up_distribution(ranking, unpooled)
    weights = ap_prior_weights(20)
    assert set(dist) == set(unpooled)
    assert math.fsum(dist.values()) == pytest.approx(1.0)
    assert dist["d0"] / dist["d3"] == pytest.approx(weights[0] / weights[3])
    truth = {d: int(i % 4 == 0) for i, d in enumerate(ranking)}
    q = {d: 0.7 for d in unpooled}  # badly calibrated on purpose
    rng = random.Random(11)
    totals = []
    for _ in range(4000):
        draw = top_up_draw(ranking, unpooled, 4, rng)
        assert draw is not None
        assert len(draw.order) <= 4
        totals.append(
            math.fsum(q.values())
            + math.fsum((truth[d] - q[d]) / draw.inclusion[d] for d in draw.order)
        )
    mean = math.fsum(totals) / len(totals)
    sd = math.sqrt(math.fsum((t - mean) ** 2 for t in totals) / (len(totals) - 1))
    assert abs(mean - sum(truth[d] for d in unpooled)) < 4 * sd / math.sqrt(len(totals))
    assert top_up_draw(ranking, [], 4, rng) is None


def test_a_top_up_joins_the_topics_sample_as_a_second_stratum():
    judged, probs, raw, ranking = _topic()
    merged = top_up_prels({"1": judged}, {"1": {"u1": (1, 0.5), "u3": (0, 0.25)}})
    topic = merged["1"]
    assert topic.rel["u1"] == 1
    assert topic.inclusion_prob["u3"] == 0.25
    assert topic.n_sampled == judged.n_sampled + 2
    assert judged.rel.get("u1") is None  # the pool's sample is left as it was
    with pytest.raises(OutsidePoolError, match="p0"):
        top_up_prels({"1": judged}, {"1": {"p0": (1, 0.5)}})
    # With every unpooled document drawn for sure, the estimate is the one full
    # judgments of them give, whatever q.
    exact = top_up_prels({"1": judged}, {"1": {d: (int(d == "u2"), 1.0) for d in raw}})
    wrong = {d: 0.9 for d in raw}
    right = {d: float(d == "u2") for d in raw}
    run = {"run": {"1": {d: -i for i, d in enumerate(ranking)}}}
    a = model_assisted_evaluate(
        exact, {"1": probs}, run, unsampled={"1": wrong}, estimator=PLAIN
    )
    b = model_assisted_evaluate(
        {"1": judged}, {"1": probs}, run, unsampled={"1": right}, estimator=PLAIN
    )
    assert a["run"]["AP"].estimate == pytest.approx(b["run"]["AP"].estimate)


def test_a_new_runs_interval_spans_the_uncorrected_estimate_of_its_floored_topics():
    """A floored topic's other estimate (the ratio without Beale's correction) moves
    the run's mean by (other - estimate)/n; the new run's interval reaches that far
    past its own half-width on that side, and :attr:`RunInterval.span` says how far.
    Without such a topic the interval is the plain one."""
    topics = (
        TopicEstimate("1", 0.30, 0.004, 6.0, other=0.42),
        TopicEstimate("2", 0.50, 0.002, 9.0),
    )
    estimate = run_estimate("new", "AP", topics)
    none = Evidence(0, 0.0, 0, 0, 0.0, 0.0, 0.0, 0.0)
    cal = Calibration(ratio=1.0, var=0.0, prior=1.0, evidence=none, by_contributor={})
    parts = run_interval(estimate, {}, cal)
    assert parts.span == pytest.approx(0.06)
    low, high = interval95(0.40, estimate.var)
    assert parts.ci95 == pytest.approx((low, high + 0.06))
    assert estimate.ci95 == pytest.approx(parts.ci95)
    plain = run_interval(run_estimate("new", "AP", topics[1:]), {}, cal)
    assert plain.span == 0.0
    assert plain.ci95 == pytest.approx(interval95(0.50, 0.002))
    empty = run_interval(RunEstimate("new", "AP", NAN, NAN, (NAN, NAN), (), 0), {}, cal)
    assert math.isnan(empty.ci95[0])
