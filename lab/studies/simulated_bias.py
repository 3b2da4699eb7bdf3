"""The estimator's bias in worlds drawn from the calibrated model (a parametric
bootstrap; measured in docs/results/intervals.md and not adopted).

Each replicate keeps the labels of the judged documents, draws the label of every
other pooled document from p' (``world="cal"``: the model recalibrated on the sampled
documents of every topic, weighted 1/π, by a logistic regression on logit p and log π;
``"topic"``: that, plus a per-topic offset fitted on the topic's own sample against a
normal prior; ``"raw"``: p itself; ``"truth"``: the real labels, which makes it
``redraw``), draws a fresh sample of the same design, and compares the estimate with
the world's pooled AP. The mean error per (run, topic) is the bias the caller
subtracts. Unlike resampling the drawn documents, this sees the pooled documents a
sample rarely draws, but only as well as p' places relevance among them, which the
sample itself cannot check.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from nuggets_app.ir.estimator import REPORTED, Estimator
from nuggets_app.ir.measures import average_precision
from nuggets_app.ir.model_assisted import model_assisted_evaluate
from nuggets_app.ir.prels import TopicPrels, ranking_order

# The replicates' generator seed: the same worlds for every option set compared.
SEED = 0


def _logit(x):
    x = np.clip(x, 1e-4, 1 - 1e-4)
    return np.log(x / (1 - x))


def draws_infer(design: Mapping[str, float]) -> tuple[int, dict[str, float]]:
    """K and q of the with-replacement design from π (Σ q = 1)."""
    pis = np.array([min(p, 1 - 1e-12) for p in design.values()])
    best = (math.inf, 1)
    for k in range(1, 5000):
        total = float(np.sum(1 - (1 - pis) ** (1.0 / k)))
        best = min(best, (abs(total - 1), k))
        if total < 1:
            break
    k = best[1]
    q = {d: 1 - (1 - min(p, 1 - 1e-12)) ** (1.0 / k) for d, p in design.items()}
    return k, q


def calibration_fit(prels, probs, level) -> np.ndarray:
    """Weighted logistic regression of y on (1, logit p, log π) over every sampled
    document of every topic, weights 1/π (IRLS, a small ridge)."""
    rows, ys, ws = [], [], []
    for qid, topic in prels.items():
        p = probs.get(qid, {})
        for d, rel in topic.rel.items():
            pi = topic.inclusion_prob.get(d, 0.0)
            if pi <= 0:
                continue
            rows.append((1.0, _logit(p.get(d, 0.0)), math.log(pi)))
            ys.append(float(rel >= level))
            ws.append(1.0 / pi)
    x, y, w = np.array(rows), np.array(ys), np.array(ws)
    w = w / w.mean()
    beta = np.zeros(x.shape[1])
    beta[1] = 1.0
    for _ in range(50):
        eta = x @ beta
        mu = 1 / (1 + np.exp(-eta))
        grad = x.T @ (w * (y - mu)) - 1e-3 * beta
        hess = (x * (w * mu * (1 - mu))[:, None]).T @ x + 1e-3 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        beta += step
        if np.max(np.abs(step)) < 1e-8:
            break
    return beta


def topic_offsets(prels, probs, beta, level, prior_var=1.0) -> dict[str, float]:
    """Per topic, the offset u_t added to the calibrated logit: the topic's own sampled
    documents (weights 1/π, normalised to the topic's sample size) against a normal
    prior of variance ``prior_var`` (Newton on one parameter)."""
    out = {}
    for qid, topic in prels.items():
        p_of = probs.get(qid, {})
        rows = [
            (float(rel >= level), pi, p_of.get(d, 0.0))
            for d, rel in topic.rel.items()
            if (pi := topic.inclusion_prob.get(d, 0.0)) > 0
        ]
        if not rows:
            out[qid] = 0.0
            continue
        y = np.array([r[0] for r in rows])
        pi = np.array([r[1] for r in rows])
        base = np.array(
            [beta[0] + beta[1] * _logit(r[2]) + beta[2] * math.log(r[1]) for r in rows]
        )
        w = (1 / pi) / (1 / pi).mean()
        u = 0.0
        for _ in range(30):
            mu = 1 / (1 + np.exp(-(base + u)))
            grad = float(np.sum(w * (y - mu))) - u / prior_var
            hess = float(np.sum(w * mu * (1 - mu))) + 1 / prior_var
            u += grad / hess
            if abs(grad / hess) < 1e-9:
                break
        out[qid] = u
    return out


def calibrated(beta, p, pi):
    """p' of documents with model probability p and inclusion probability π."""
    eta = beta[0] + beta[1] * _logit(p) + beta[2] * np.log(np.maximum(pi, 1e-12))
    return 1 / (1 + np.exp(-eta))


def simulated_bias(
    prels,
    probs,
    design,
    runs,
    *,
    level,
    estimator: Estimator = REPORTED,
    replicates=50,
    world="cal",
    truth_labels=None,
) -> dict[str, dict[str, float]]:
    """run -> qid -> mean (estimate - world truth) of AP by ``estimator`` over the
    replicates (drawn from a generator seeded with :data:`SEED`)."""
    rng = np.random.default_rng(SEED)
    beta = calibration_fit(prels, probs, level)
    offsets = topic_offsets(prels, probs, beta, level) if world == "topic" else {}
    topics = {}
    for qid, topic in prels.items():
        if topic.label == "UMASS" or qid not in design:
            continue
        docs = sorted(design[qid])
        index = {d: i for i, d in enumerate(docs)}
        pi = np.array([design[qid][d] for d in docs])
        p = np.array([probs.get(qid, {}).get(d, 0.0) for d in docs])
        pw = calibrated(beta, p, pi) if world in ("cal", "topic") else p
        if world == "topic":
            pw = 1 / (1 + np.exp(-(_logit(pw) + offsets.get(qid, 0.0))))
        known = np.full(len(docs), -1.0)
        if world == "truth":
            tl = truth_labels.get(qid, {})
            known = np.array([float(tl.get(d, 0) >= level) for d in docs])
        for d, rel in topic.rel.items():
            if d in index and topic.inclusion_prob.get(d, 0) > 0:
                known[index[d]] = float(rel >= level)
        k, q = draws_infer(design[qid])
        qv = np.array([q[d] for d in docs])
        lists = {r: ranking_order(run[qid]) for r, run in runs.items() if qid in run}
        topics[qid] = (docs, pi, pw, known, k, qv / qv.sum(), lists)
    acc: dict[str, dict[str, list[float]]] = {}
    for _ in range(replicates):
        world_prels: dict[str, TopicPrels] = {}
        truth: dict[str, dict[str, float]] = {}
        for qid, (docs, pi, pw, known, k, qv, lists) in topics.items():
            y = np.where(known >= 0, known, rng.random(len(docs)) < pw).astype(float)
            picked = np.unique(rng.choice(len(docs), size=k, replace=True, p=qv))
            sample = TopicPrels(qid)
            for i in picked:
                sample.rel[docs[i]] = int(y[i]) * level
                sample.inclusion_prob[docs[i]] = float(pi[i])
            sample.neu = sample.n_sampled = len(picked)
            world_prels[qid] = sample
            relevant = {docs[i] for i in np.flatnonzero(y)}
            for run, ranking in lists.items():
                truth.setdefault(run, {})[qid] = average_precision(ranking, relevant)
        found = model_assisted_evaluate(
            world_prels, probs, runs, estimator=estimator, level=level, design=design
        )
        for run, measures in found.items():
            for t in measures["AP"].topics:
                acc.setdefault(run, {}).setdefault(t.qid, []).append(
                    t.estimate - truth[run][t.qid]
                )
    return {r: {q: float(np.mean(v)) for q, v in per.items()} for r, per in acc.items()}
