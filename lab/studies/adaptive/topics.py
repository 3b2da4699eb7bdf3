"""Per-topic errors of one simulation in rounds (docs/results/adaptive.md, "Why the
intervals miss"): the topics whose default-estimator AP is furthest from the pool's
labels, with R̂, the topic's λ, the linearised sd of AP, and the sample's largest
weights.

Usage (from the repository root, the collection imported as in run.sh):
  DATA_DIR=var/simulation/dl19 DEBUG=1 .venv/bin/python \
    -m lab.studies.adaptive.topics dl19 QRELS LEVEL SEED [ROUNDS] [FRACTION]
"""

import math
import sys

from lab.services.simulation_config import SimulationConfig
from lab.services.simulation_rounds import rounds_run
from nuggets_app.ir.estimator import Estimator
from nuggets_app.ir.model_assisted import topic_estimates, topic_samples
from nuggets_app.ir.prels import PrelsRecord, prels_load, ranking_order
from nuggets_app.ir.run_intervals import topic_bounded
from nuggets_app.models import Collection, Run


def pooled_ap(ranking, relevant):
    hits, total = 0, 0.0
    for rank, docno in enumerate(ranking, 1):
        if docno in relevant:
            hits += 1
            total += hits / rank
    return total / len(relevant) if relevant else math.nan


def main() -> None:
    name, qrels, level, seed = (
        sys.argv[1],
        sys.argv[2],
        int(sys.argv[3]),
        int(sys.argv[4]),
    )
    rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 2
    fraction = float(sys.argv[6]) if len(sys.argv) > 6 else 0.05
    collection = Collection.objects.get(name=name)
    d = rounds_run(
        collection=collection,
        qrels_path=qrels,
        runs=list(Run.objects.filter(collection=collection)),
        config=SimulationConfig(
            depth=100,
            sample_size=0,
            sample_fraction=fraction,
            seed=seed,
            relevance_level=level,
        ),
        rounds=rounds,
    )
    records = [
        PrelsRecord(0, q, x, d.human[q][x], 1, pi)
        for q in sorted(d.sample)
        for x, pi in sorted(d.sample[q].items())
    ]
    prels = prels_load([r._replace(line=i) for i, r in enumerate(records, 1)])
    for q, weights in d.var_weight.items():
        if q in prels:
            prels[q].var_weight = dict(weights)
    # Tuned p, R̂ unfloored, no ratio correction; each topic's AP clipped below.
    estimator = Estimator(bounded=False, beale=None, interval="linearised")
    samples = topic_samples(prels, d.crossfit or {}, estimator=estimator, level=level)
    rows = []
    for q, sample in samples.items():
        relevant = {x for x in d.pool[q] if d.truth.get(q, {}).get(x, 0) >= level}
        errors, variances = [], []
        for run in d.runs.values():
            if q not in run:
                continue
            ranking = ranking_order(run[q])[: d.config.depth]
            ap = topic_bounded(topic_estimates(sample, ranking))["AP"]
            errors.append(ap.estimate - pooled_ap(ranking, relevant))
            variances.append(ap.var)
        judged = prels[q]
        top = max(judged.rel, key=lambda x: 1 / judged.inclusion_prob[x])
        rows.append(
            (
                sum(errors) / len(errors),
                q,
                len(relevant),
                sample.est_r,
                sample.scale,
                math.sqrt(sum(variances) / len(variances)),
                sum(1 for x, rel in judged.rel.items() if rel >= level),
                len(judged.rel),
                math.fsum((d.crossfit or {}).get(q, {}).get(x, 0.0) for x in d.pool[q]),
                (
                    round(1 / judged.inclusion_prob[top], 1),
                    int(judged.rel[top] >= level),
                    round((d.crossfit or {}).get(q, {}).get(top, 0.0), 3),
                ),
            )
        )
    rows.sort()
    print(
        "| topic | AP error | true R | R̂ | λ | sd AP | judged relevant | judged | Σ p | "
        "largest weight (w, y, p) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows[:10]:
        error, qid, true_r, est_r, lam, sd, rel, n_judged, sum_p, heaviest = row
        print(
            f"| {qid} | {error:.3f} | {true_r} | {est_r:.1f} | {lam:.2f} | {sd:.3f} | "
            f"{rel} | {n_judged} | {sum_p:.1f} | {heaviest} |"
        )


if __name__ == "__main__":
    main()
