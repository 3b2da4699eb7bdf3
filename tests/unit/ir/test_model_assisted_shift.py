"""A shift common to all runs, and one statMAP.

Where a model over-rates many documents the sample rarely draws, R̂'s coefficient of
variation passes 1 and Beale's estimate tends to ``Ĉ/V̂_R``, near 0. The reported rule
(:func:`nuggets_app.ir.beale.beale_span`) corrects every topic and, where R̂ was
raised to its floor, spans the uncorrected ratio too (docs/explanation/model-assisted.md,
"Where Beale's expansion holds"). The floor of R̂ at the relevant documents judged
(``bounded``) makes the bias check's statMAP statAP's own.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import replace

import pytest

from lab.maths.estimators import beale_everywhere, beale_unfloored
from nuggets_app.ir.beale import BealeUse, beale_span
from nuggets_app.ir.bias_check import bias_check
from nuggets_app.ir.estimator import REPORTED
from nuggets_app.ir.model_assisted import model_assisted_evaluate, topic_sample
from nuggets_app.ir.prels import PrelsRecord, TopicPrels, prels_load
from nuggets_app.ir.sampling import draw_statap, pool_distribution
from nuggets_app.ir.statap import statap_evaluate
from tests.unit.ir.estimators import TUNED


def _world(rng: random.Random, topics: int = 6):
    """Six topics of 200 documents, about seven relevant each (latent score > 1.8),
    six noisy runs of 60 per topic; a model that finds the relevant documents
    (p = 0.6) but over-rates every other pooled document (p = 0.12, some fourteen
    times the relevant count per topic)."""
    runs: dict[str, dict[str, dict[str, float]]] = {f"r{s}": {} for s in range(6)}
    pools, truth, probs = {}, {}, {}
    for t in range(topics):
        qid = str(t + 1)
        docs = [f"t{t}d{i:03d}" for i in range(200)]
        latent = {d: rng.gauss(0, 1) for d in docs}
        for run in runs.values():
            ranked = sorted(docs, key=lambda d: -latent[d] - rng.gauss(0, 1))[:60]
            run[qid] = {d: 60.0 - i for i, d in enumerate(ranked)}
        pools[qid] = pool_distribution({n: list(r[qid]) for n, r in runs.items()})
        truth[qid] = {d: int(latent[d] > 1.8) for d in pools[qid]}
        probs[qid] = {d: 0.6 if truth[qid][d] else 0.12 for d in pools[qid]}
    return runs, pools, truth, probs


def _sample(pools, truth, rng: random.Random) -> dict[str, TopicPrels]:
    """A statAP sample of 15 draws per topic, judged by the truth."""
    prels = {}
    for qid, dist in pools.items():
        draw = draw_statap(dist, 15, rng, stop="draws")
        prels[qid] = TopicPrels(
            qid,
            rel={d: truth[qid][d] for d in draw.order},
            inclusion_prob={d: draw.inclusion[d] for d in draw.order},
            neu=1,
        )
    return prels


def _true_map(run, truth):
    aps = []
    for qid, scores in run.items():
        ranking = sorted(scores, key=lambda d: -scores[d])
        hits = [i for i, d in enumerate(ranking, 1) if truth[qid].get(d)]
        relevant = sum(truth[qid].values())
        aps.append(math.fsum(k / i for k, i in enumerate(hits, 1)) / relevant)
    return statistics.fmean(aps)


@pytest.mark.parametrize("floored", [True, False])
def test_the_reported_rule_corrects_every_topic_and_spans_where_r_was_floored(floored):
    assert beale_span(10.0, 400.0, floored=floored) == BealeUse(True, floored)


def test_the_reported_interval_spans_the_uncorrected_ratio_where_r_is_floored():
    """The reported rule: the estimate is Beale's on every topic, and the
    interval is the union of that estimate's interval and the interval of the same
    estimate with the uncorrected ratio N̂/m on the floored topics (the lab's
    ``beale_unfloored``), both of the same variance: checked against both computed
    apart, run by run, on 60 samples of the over-rating world, where the span widens
    the interval of more than 60 of the 360 runs."""
    rng = random.Random(9)
    runs, pools, truth, probs = _world(rng)
    spanned_runs = 0
    for _ in range(60):
        prels = _sample(pools, truth, rng)
        rules = (beale_span, beale_everywhere, beale_unfloored)
        found = {
            rule: model_assisted_evaluate(
                prels, probs, runs, estimator=replace(REPORTED, beale=rule)
            )
            for rule in rules
        }
        for name in runs:
            span, corrected, uncorrected = (found[r][name]["AP"] for r in rules)
            assert span.estimate == corrected.estimate
            assert span.var == pytest.approx(uncorrected.var)
            low = min(corrected.ci95[0], uncorrected.ci95[0])
            high = max(corrected.ci95[1], uncorrected.ci95[1])
            assert span.ci95 == pytest.approx((low, high))
            if all(t.other is None for t in span.topics):
                assert span.ci95 == pytest.approx(corrected.ci95)
            elif span.ci95 != pytest.approx(corrected.ci95):
                spanned_runs += 1
    assert spanned_runs > 60


def _prels(rows):
    records = [
        PrelsRecord(line, qid, docno, rel, 1, pi)
        for line, (qid, docno, rel, pi) in enumerate(rows, 1)
    ]
    return prels_load(records, source="test")


def _floor_world():
    """Two topics: in topic 1 a relevant document drawn for sure and a non-relevant
    one with p = 0.9 drawn with π = 0.05 put the tuned R̂ below the one relevant
    document judged; topic 2 is ordinary."""
    prels = _prels([
        ("1", "a", 1, 1.0), ("1", "b", 0, 0.05),
        ("2", "x", 1, 0.5), ("2", "y", 0, 0.4),
    ])  # fmt: skip
    probs = {"1": {"a": 0.2, "b": 0.9, "c": 0.3}, "2": {"x": 0.7, "y": 0.1, "z": 0.4}}
    return prels, probs


def test_r_is_floored_at_the_relevant_judged_so_the_bias_check_statmap_is_statap():
    """Topic 1: a relevant document drawn for sure and a non-relevant one with
    p = 0.9 drawn with π = 0.05 put the tuned R̂ at -7.4, below the one relevant
    document judged. Unfloored, the topic left the bias check (and its statMAP)
    while statAP kept it; floored at 1, both average the same two topics."""
    prels, probs = _floor_world()
    runs = {"run": {"1": {"c": 3.0, "a": 2.0, "b": 1.0}, "2": {"x": 2.0, "z": 1.0}}}
    tuned = topic_sample(prels["1"], probs["1"], estimator=TUNED)
    assert tuned.est_r == pytest.approx(-7.4)
    assert topic_sample(prels["1"], probs["1"], estimator=REPORTED).est_r == 1.0
    statmap = statap_evaluate(prels, runs["run"]).summary.stat_map
    (check,) = bias_check(prels, probs, runs)
    assert check.n_topics == 2
    assert check.statap == pytest.approx(statmap, abs=1e-15)
    unbounded = replace(REPORTED, bounded=False)
    (unfloored,) = bias_check(prels, probs, runs, estimator=unbounded)
    assert unfloored.n_topics == 1
    assert unfloored.statap != pytest.approx(statmap)
