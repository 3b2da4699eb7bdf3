"""Interval methods of the model-assisted estimate (nuggets_app/ir/intervals.py): the
anticipated variance against brute-force derivatives, every sample of a tiny sparse
pool enumerated (some samples hold no relevant document), and a property test of
coverage on simulated pools with a known truth (docs/explanation/model-assisted.md,
"Intervals on sparse collections")."""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections import defaultdict
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nuggets_app.ir.beale import BealeRule, beale_span
from nuggets_app.ir.estimator import PLAIN, REPORTED
from nuggets_app.ir.intervals import (
    MODEL_ONLY_VAR,
    THIN_BELOW,
    IntervalError,
    anticipated_vars,
    judgments_to_narrow,
)
from nuggets_app.ir.model_assisted import (
    model_assisted_evaluate,
    topic_estimates,
    topic_sample,
)
from nuggets_app.ir.prels import TopicPrels
from nuggets_app.ir.run_intervals import run_estimate, topic_bounded
from nuggets_app.ir.sampling import (
    draw_statap,
    inclusion_probabilities,
    pool_distribution,
)
from tests.unit.ir.estimators import TUNED

# The pool of algorithms.md 1.5 (run1 = a b c d, run2 = c a e) with two relevant
# documents that the runs' AP prior rarely draws, and a model that under-rates them.
RUNS = {"run1": ["a", "b", "c", "d"], "run2": ["c", "a", "e"]}
SPARSE = {"a": 0, "b": 0, "c": 1, "d": 1, "e": 0}
MODEL = {"a": 0.3, "b": 0.2, "c": 0.1, "d": 0.05, "e": 0.2}


def by(prepared, interval: str, beale: BealeRule | None = None):
    """The prepared sample's estimates with another interval method (and Beale rule):
    neither changes the run-independent terms."""
    return replace(
        prepared, estimator=replace(prepared.estimator, interval=interval, beale=beale)
    )


def topic_of(labels, pi):
    return TopicPrels("1", rel=dict(labels), inclusion_prob=dict(pi), neu=len(labels))


def samples_of_design(q, draws):
    """Every distinct sample of ``draws`` draws with replacement, with its probability."""
    out = defaultdict(float)
    for seq in itertools.product(sorted(q), repeat=draws):
        out[frozenset(seq)] += math.prod(q[d] for d in seq)
    assert math.fsum(out.values()) == pytest.approx(1.0, abs=1e-12)
    return out


def true_ap(ranking, labels):
    r = sum(labels.values())
    hits, total = 0, 0.0
    for rank, d in enumerate(ranking, 1):
        if labels.get(d, 0):
            hits += 1
            total += hits / rank
    return total / r if r else 0.0


# The anticipated variance against brute-force derivatives ------------------------


def plug_in(y_hat, ranking, k):
    """AP, R-prec and P@k computed from every pooled document's ŷ (R̂ = Σ_P ŷ)."""
    r = math.fsum(y_hat.values())
    listed = [y_hat.get(d, 0.0) for d in ranking]
    num, sp = 0.0, 0.0
    for rank, y in enumerate(listed, 1):
        num += y * (1.0 + sp) / rank
        sp += y
    rounded = int(r + 0.5)
    if 0 < rounded <= len(listed):
        rprec = math.fsum(listed[:rounded]) / rounded
    else:
        rprec = math.fsum(listed) / r
    return num / r, rprec, math.fsum(listed[:k]) / k


@pytest.mark.parametrize("draws", [2, 3, 6])
@pytest.mark.parametrize("run", sorted(RUNS))
def test_the_anticipated_variance_sums_the_models_residual_over_the_whole_pool(
    draws, run
):
    """``Σ_P (1 - π)/π a² p (1 - p)`` with ``a`` by central differences of the plug-in
    measure in each pooled document's ŷ, drawn or not, for every sample."""
    q = pool_distribution(RUNS)
    pi = inclusion_probabilities(q, draws)
    ranking, k, h = RUNS[run], 2, 1e-6
    for sample in samples_of_design(q, draws):
        labels = {d: SPARSE[d] for d in sorted(sample)}
        prepared = topic_sample(topic_of(labels, pi), MODEL, estimator=PLAIN, design=pi)
        if prepared.est_r <= 0:
            continue
        y_hat = {
            d: MODEL[d] + ((SPARSE[d] - MODEL[d]) / pi[d] if d in sample else 0.0)
            for d in q
        }
        base = plug_in(y_hat, ranking, k)
        want = [0.0, 0.0, 0.0]
        for d in q:
            up = plug_in({**y_hat, d: y_hat[d] + h}, ranking, k)
            down = plug_in({**y_hat, d: y_hat[d] - h}, ranking, k)
            weight = (1 - pi[d]) / pi[d] * MODEL[d] * (1 - MODEL[d])
            for i in range(3):
                want[i] += weight * ((up[i] - down[i]) / (2 * h)) ** 2
        listed = [y_hat[d] for d in ranking]
        rounded = int(prepared.est_r + 0.5)
        got = anticipated_vars(
            ranking,
            listed,
            MODEL,
            pi,
            est_r=prepared.est_r,
            ap=base[0],
            cutoff=k,
            rp_rank=rounded if 0 < rounded <= len(ranking) else 0,
        )
        assert got == pytest.approx(want, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("relevant", [THIN_BELOW - 1, THIN_BELOW])
def test_sparse_floors_the_variance_only_below_the_thin_sample_threshold(relevant):
    """A topic of 60 pooled documents: 12 drawn at π = 0.9 and well predicted
    (``relevant`` of them relevant), 48 undrawn at π = 0.1 with p = 0.3. The drawn
    residuals are small, the model anticipates a large design variance from the
    undrawn: ``sparse`` gives ``combined``'s AP variance while the sample holds fewer
    than THIN_BELOW relevant judged documents, ``linearised``'s from there."""
    pool = [f"d{i:02d}" for i in range(60)]
    drawn = pool[:12]
    pi = {d: 0.9 if d in drawn else 0.1 for d in pool}
    labels = {d: int(i < relevant) for i, d in enumerate(drawn)}
    probs = {d: 0.3 for d in pool} | {d: 0.1 + 0.8 * y for d, y in labels.items()}
    prepared = topic_sample(topic_of(labels, pi), probs, estimator=PLAIN, design=pi)
    var = {
        method: topic_estimates(by(prepared, method), pool[::2])["AP"].var
        for method in ("linearised", "combined", "sparse")
    }
    assert var["combined"] > 100 * var["linearised"]
    thin = relevant < THIN_BELOW
    assert var["sparse"] == var["combined" if thin else "linearised"]


# Every sample of a tiny sparse pool ------------------------------------------------


def enumerated(draws, interval):
    """Per run over the valid samples (R̂ > 0): their probability, the coverage of
    the 95% interval, E[V̂], the MSE of AP̂ and the share with no relevant document."""
    q = pool_distribution(RUNS)
    pi = inclusion_probabilities(q, draws)
    out = {run: defaultdict(float) for run in RUNS}
    for sample, prob in samples_of_design(q, draws).items():
        labels = {d: SPARSE[d] for d in sorted(sample)}
        prepared = topic_sample(topic_of(labels, pi), MODEL, estimator=PLAIN, design=pi)
        for run, ranking in RUNS.items():
            found = topic_estimates(by(prepared, interval, beale_span), ranking)
            est = topic_bounded(found)["AP"]
            if math.isnan(est.estimate):
                continue
            truth, (low, high) = true_ap(ranking, SPARSE), est.ci95
            row = out[run]
            row["mass"] += prob
            row["covered"] += prob * (low <= truth <= high)
            row["var"] += prob * est.var
            row["mse"] += prob * (est.estimate - truth) ** 2
            row["alone"] += prob * (not any(labels.values()))
    return {
        run: {key: value / row["mass"] for key, value in row.items()}
        for run, row in out.items()
    }


@pytest.mark.parametrize("draws", [2, 3, 4])
def test_the_reported_variance_matches_the_enumerated_error_on_a_sparse_pool(draws):
    """Over every sample: the linearised variance misses most of AP̂'s error on run2
    (measured E[V̂]/MSE 0.37-0.51, coverage 0.35-0.52), the reported one matches it
    (0.90-1.00, coverage 0.88-0.89) and covers run1 in every valid sample."""
    linear = enumerated(draws, "linearised")
    reported = enumerated(draws, REPORTED.interval)
    for run in RUNS:
        assert reported[run]["alone"] > 0.05  # samples with no relevant document
        assert reported[run]["var"] >= 0.85 * reported[run]["mse"]
        assert reported[run]["covered"] >= 0.85
        assert reported[run]["covered"] >= linear[run]["covered"]
    assert linear["run2"]["var"] < 0.6 * linear["run2"]["mse"]
    assert linear["run2"]["covered"] < 0.6
    assert reported["run1"]["covered"] == pytest.approx(1.0)


def test_a_topic_without_a_relevant_judged_document_rests_on_the_model():
    """No relevant document in the sample: every bounded measure gets the variance
    of the widest [0, 1] estimate, the topic is marked and its interval covers."""
    q = pool_distribution(RUNS)
    pi = inclusion_probabilities(q, 2)
    labels = {"b": 0}
    prepared = topic_sample(topic_of(labels, pi), MODEL, estimator=PLAIN, design=pi)
    assert prepared.n_relevant == 0
    assert prepared.est_r > 0
    for ranking in RUNS.values():
        narrow = topic_bounded(topic_estimates(by(prepared, "linearised"), ranking))
        wide = topic_bounded(topic_estimates(by(prepared, REPORTED.interval), ranking))
        for name in ("AP", "Rprec", "P@30", "nDCG@30"):
            assert wide[name].model_only
            assert wide[name].var == MODEL_ONLY_VAR
            assert narrow[name].var <= MODEL_ONLY_VAR
        assert narrow["P@30"].var < MODEL_ONLY_VAR
        assert wide["R"].var == narrow["R"].var
        low, high = wide["AP"].ci95
        assert low <= true_ap(ranking, SPARSE) <= high
    both = run_estimate("run1", "AP", [wide["AP"], wide["AP"]])
    assert both.n_model_only == 2


def test_an_unknown_interval_method_is_refused():
    with pytest.raises(IntervalError, match="got 'bootstrap'"):
        replace(TUNED, interval="bootstrap")


@pytest.mark.parametrize(
    ("judged", "expected", "pool", "want"),
    [
        (20, 0.5, None, 120),  # 3 relevant expected: 6 times the sample
        (20, 0.5, 100, 100),  # capped at the pool
        (20, 6.0, None, 21),  # already enough: one more at least
        (20, 0.0, 300, 300),  # the model expects nothing: the whole pool
        (20, 0.0, None, None),
    ],
)
def test_judgments_to_narrow_scale_the_sample_to_three_expected_relevant(
    judged, expected, pool, want
):
    assert judgments_to_narrow(judged, expected, pool) == want


# Coverage on simulated pools with a known truth ------------------------------------


def simulated(seed, *, rate, shift, topics=6, docs=60, runs=5, depth=30):
    """Topics whose labels follow a latent score (``rate``: how sparse), runs that
    rank by noisy latent scores, a model mis-calibrated by ``shift`` on the logit."""
    rng = random.Random(seed)
    scores, truth, probs, dists = {f"r{s}": {} for s in range(runs)}, {}, {}, {}
    for t in range(topics):
        qid = str(t + 1)
        latent = {f"{qid}-{i}": rng.gauss(0, 1) for i in range(docs)}
        chance = {d: 1 / (1 + math.exp(-(rate + 2 * x))) for d, x in latent.items()}
        truth[qid] = {d: int(rng.random() < c) for d, c in chance.items()}
        lists = {}
        for s in range(runs):
            order = sorted(latent, key=lambda d: -latent[d] - rng.gauss(0, 0.5 + s))
            lists[f"r{s}"] = order[:depth]
            scores[f"r{s}"][qid] = {d: depth - i for i, d in enumerate(order[:depth])}
        dists[qid] = pool_distribution(lists)
        probs[qid] = {
            d: 1 / (1 + math.exp(-(rate + shift + 2 * latent[d]))) for d in dists[qid]
        }
    return scores, truth, probs, dists


@settings(max_examples=6, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 10_000),
    rate=st.floats(-4.5, -3.0),
    shift=st.floats(-2.5, 0.0),
)
def test_the_reported_interval_covers_the_pooled_truth_on_sparse_simulated_pools(
    seed, rate, shift
):
    """Sparse topics (a few relevant documents in 60), six draws per topic, a model
    that under-rates relevance: over 20 samples and 5 runs, at least 85% of the
    reported intervals of MAP hold the pooled truth, no fewer than the linearised
    ones (measured on three such pools: 0.98-1.00 against 0.79-0.84)."""
    scores, truth, probs, dists = simulated(seed, rate=rate, shift=shift)
    rng = random.Random(seed)
    covered = {"linearised": [], REPORTED.interval: []}
    for _ in range(20):
        prels, design = {}, {}
        for qid, dist in dists.items():
            draw = draw_statap(dist, 6, rng, stop="draws")
            labels = {d: truth[qid][d] for d in draw.order}
            pi = {d: draw.inclusion[d] for d in draw.order}
            prels[qid] = TopicPrels(qid, rel=labels, inclusion_prob=pi, neu=len(pi))
            design[qid] = draw.inclusion
        for interval in covered:
            estimator = replace(REPORTED, interval=interval)
            found = model_assisted_evaluate(
                prels, probs, scores, estimator=estimator, design=design
            )
            for run, measures in found.items():
                est = measures["AP"]
                if not est.topics:
                    continue
                pooled = statistics.fmean(
                    true_ap(
                        sorted(
                            scores[run][t.qid], key=lambda d: -scores[run][t.qid][d]
                        ),
                        {d: truth[t.qid][d] for d in dists[t.qid]},
                    )
                    for t in est.topics
                )
                low, high = est.ci95
                covered[interval].append(low <= pooled <= high)
    linear = statistics.fmean(covered["linearised"])
    reported = statistics.fmean(covered[REPORTED.interval])
    assert reported >= 0.85
    assert reported >= linear
