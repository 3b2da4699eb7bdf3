"""Designs of the later rounds compared offline, many replicates, one fixed model.

A one-shot simulation (statAP sample of 10%, seed 11) gives the relevance model's
cross-fitted p of every pooled document; that p is then held fixed (as if every round
had the same model) and the pool is sampled again and again: one-shot statAP samples
(``one,FRACTION``) and samples in rounds at 5% of the mean pool size per topic
(``r,SHARE,ROUNDS,ALPHA,IMPORTANCE``: the first round's share of the budget, the number
of rounds, the floor's share and, with IMPORTANCE 1, ``ir.rounds.ap_importance`` in
place of statAP's prior as the weight of ``sqrt(p(1-p))``). Each replicate is scored by
the default estimator (model-assisted, bounded) against the MAP of the full pool's
labels: RMSE over runs, mean 95% interval width, coverage. Separates the design's effect
from the model's noise, which the end-to-end runs (run.sh) mix.

Usage (from the repository root, the collection imported as in run.sh):
  DATA_DIR=var/simulation/dl19 DEBUG=1 .venv/bin/python \
    -m lab.studies.adaptive.designs dl19 QRELS LEVEL [--runs DIR] REPS SPEC ...
"""

import math
import random
import statistics
import sys

from lab.services.simulation import simulation_run
from lab.services.simulation_config import SimulationConfig
from nuggets_app.ir.estimator import PLAIN, Estimator
from nuggets_app.ir.model_assisted import model_assisted_evaluate
from nuggets_app.ir.prels import PrelsRecord, prels_load
from nuggets_app.ir.rounds import (
    ap_importance,
    draw_first_round,
    draw_next_round,
    round_lambdas,
    round_weights,
    rounds_prels,
)
from nuggets_app.ir.sampling import draw_statap, pool_distribution
from nuggets_app.models import Collection, Run

name, qrels, level, reps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
specs = sys.argv[5:]
collection = Collection.objects.get(name=name)
d = simulation_run(
    collection=collection,
    qrels_path=qrels,
    runs=list(Run.objects.filter(collection=collection)),
    config=SimulationConfig(
        depth=100, sample_size=0, sample_fraction=0.10, seed=11, relevance_level=level
    ),
)
truth = {
    q: {x: int(d.truth.get(q, {}).get(x, 0) >= level) for x in docs}
    for q, docs in d.pool.items()
}
runs = {n: {q: s for q, s in r.items() if q in d.pool} for n, r in d.runs.items()}
depth = d.config.depth
# statAP prior per topic from runs cut at depth
prior = {}
rankings = {}
for q in d.pool:
    rk = {}
    for n, r in runs.items():
        if q in r:
            order = sorted(r[q], key=lambda x: (-r[q][x], x))[:depth]
            rk[n] = order
    prior[q] = pool_distribution(rk)
    rankings[q] = rk
p = d.crossfit or {}
truth = {
    q: {x: int(d.truth.get(q, {}).get(x, 0) >= level) for x in prior[q]} for q in prior
}
full_prels = prels_load(
    [
        PrelsRecord(i, q, x, y, 1, 1.0)
        for i, (q, x, y) in enumerate(
            ((q, x, y) for q in truth for x, y in truth[q].items()), 1
        )
    ]
)
true = {
    n: e["AP"].estimate
    for n, e in model_assisted_evaluate(full_prels, {}, runs, estimator=PLAIN).items()
}
sizes = [len(v) for v in d.pool.values()]
mean_pool = sum(sizes) / len(sizes)


# Tuned p, bounded, no ratio correction, the linearised variance.
BOUNDED = Estimator(beale=None, interval="linearised")


def evaluate(prels):
    est = model_assisted_evaluate(prels, p, runs, estimator=BOUNDED)
    m = {n: e["AP"].estimate for n, e in est.items()}
    w = statistics.mean(e["AP"].ci95[1] - e["AP"].ci95[0] for e in est.values())
    cov = statistics.mean(
        e["AP"].ci95[0] <= true[n] <= e["AP"].ci95[1] for n, e in est.items()
    )
    return m, w, cov


def one(frac, seed):
    n = max(1, round(frac * mean_pool))
    recs: list[PrelsRecord] = []
    for q in sorted(d.pool):
        dr = draw_statap(prior[q], n, random.Random(f"{seed}:{q}"))
        for x in dr.order:
            recs.append(
                PrelsRecord(len(recs) + 1, q, x, truth[q][x], 1, dr.inclusion[x])
            )
    return evaluate(prels_load(recs))


def rounds(frac, seed, share, R=2, alpha=0.2, imp=False):
    N = max(R, round(frac * mean_pool))
    n1 = max(1, round(N * share))
    rest = N - n1
    budgets = [n1] + [
        rest // (R - 1) + (1 if t < rest % (R - 1) else 0) for t in range(R - 1)
    ]
    lam = round_lambdas(budgets)
    labels, weights = {}, {}
    for q in sorted(d.pool):
        rng = random.Random(f"{seed}:{q}:1")
        rs = [draw_first_round(prior[q], budgets[0], rng)]
        for t in range(2, R + 1):
            drawn = [x for r in rs for x in r.order]
            rs.append(
                draw_next_round(
                    prior[q],
                    p.get(q, {}),
                    drawn,
                    budgets[t - 1],
                    t,
                    lam,
                    random.Random(f"{seed}:{q}:{t}"),
                    alpha=alpha,
                    importance=ap_importance(rankings[q], p.get(q, {}))
                    if imp
                    else None,
                )
            )
        weights[q] = round_weights(rs, lam)
        labels[q] = {x: truth[q][x] for x in weights[q]}
    return evaluate(rounds_prels(labels, weights))


def summary(label, fn):
    errs, ws, covs = [], [], []
    for s in range(reps):
        m, w, c = fn(s)
        errs.append(math.sqrt(statistics.mean((m[n] - true[n]) ** 2 for n in true)))
        ws.append(w)
        covs.append(c)
    print(
        f"{label:28s} rmse {statistics.mean(errs):.4f} width {statistics.mean(ws):.4f} cov {statistics.mean(covs):.3f}",
        flush=True,
    )


for spec in specs:
    kind, *rest = spec.split(",")
    if kind == "one":
        summary(spec, lambda s, f=float(rest[0]): one(f, s))
    else:
        share, R, alpha, imp = (
            float(rest[0]),
            int(rest[1]),
            float(rest[2]),
            rest[3] == "1",
        )
        summary(
            spec,
            lambda s, a=(share, R, alpha, imp): rounds(
                0.05, s, a[0], R=a[1], alpha=a[2], imp=a[3]
            ),
        )
