"""How much any model-guided design could gain, with the model the product fits.

Model-assisted estimation under Poisson sampling has a classical lower bound
(Godambe and Joshi 1965; Särndal, Swensson and Wretman 1992, §12.2): with the
model's variance ``s_d² = p_d (1 - p_d)`` and the estimate's derivatives ``a_d``, the
*anticipated* variance ``Σ_d (1/π_d - 1) a_d² s_d²`` of a design with expected size
``n`` is smallest for ``π_d ∝ |a_d| s_d`` (capped at 1). No design in rounds can do
better than that optimum under the same model; rounds only approach it with a model
fitted on fewer judgments.

This script takes the cross-fitted p of one one-shot simulation (statAP sample of 10%,
seed 11, as designs.py does) and, per topic, ``a_d`` the AP derivatives of every run
(``ir.rounds.ap_importance``: ``sqrt(Σ_runs a²)``, so the variance summed over runs).
For each design it prints the variance summed over topics and runs, anticipated (under
the model, ``σ²``) and realised (with the true labels, ``(y - p)²``, the design
variance of the difference estimator for this fixed p), as a ratio to statAP's design
at 10%:

* ``statap10``, ``statap5``: statAP's inclusion probabilities at 10% and 5% of the
  mean pool size per topic;
* ``optimal5``: ``π ∝ a s`` at 5% (the bound: the best anticipated variance of any
  design of that size);
* ``optimal5-floor``: the same with a fifth of the budget spread by statAP's prior, as
  ``ir.rounds.round_design`` guards against a wrong model.

With ``--fitted`` it also asks what rounds could reach with the models they have. It
fits the model again on one-shot samples of 5% and 2.5% (same seed), and prints the
realised variance, with the 5% model's residuals ``(y - p₅)²`` (the model an adaptive
5% sample ends with), of:

* ``statap5/p5``: statAP's design at 5%;
* ``optimal5-floor/guide2.5``: the floored optimum computed from the 2.5% model (the
  model that guides round 2 of two);
* ``optimal5-floor/guide5``: the floored optimum computed from the 5% model itself
  (no design drawn before its own judgments can have it);
* ``rounds2/guide2.5``: two rounds as the product draws them, statAP's 2.5% and then
  the floored optimum of the 2.5% model for the other 2.5% (overall
  ``π = 1 - (1 - π₁)(1 - π₂)``, the best weighting of the two);

still as ratios to statAP's design at 10% with the 10% model's residuals.

Usage (from the repository root, the collection imported as in run.sh):
  DATA_DIR=var/simulation/dl19 DEBUG=1 .venv/bin/python \
    -m lab.studies.adaptive.bound dl19 QRELS LEVEL [--fitted]
"""

import math
import sys

from lab.services.simulation import simulation_run
from lab.services.simulation_config import SimulationConfig
from nuggets_app.ir.rounds import ap_importance, capped_probabilities
from nuggets_app.ir.sampling import (
    inclusion_probabilities,
    pool_distribution,
)
from nuggets_app.models import Collection, Run

FLOOR = 0.2


def statap_pi(prior: dict[str, float], n: float) -> dict[str, float]:
    """statAP's inclusion probabilities with the number of draws whose expected
    number of distinct documents is ``n`` (bisection on the draws)."""
    low, high = 0.0, 1.0
    while math.fsum(inclusion_probabilities(prior, int(high)).values()) < n:
        high *= 2
        if high > 1e7:
            return dict.fromkeys(prior, 1.0)
    for _ in range(60):
        mid = (low + high) / 2
        pi = {
            d: -math.expm1(mid * math.log1p(-q)) if q < 1 else 1.0
            for d, q in prior.items()
        }
        if math.fsum(pi.values()) < n:
            low = mid
        else:
            high = mid
    return {
        d: -math.expm1(high * math.log1p(-q)) if q < 1 else 1.0
        for d, q in prior.items()
    }


def variances(pi, weight, p, y):
    """(anticipated, realised) ``Σ (1/π - 1) a² v`` over one topic."""
    anticipated = realised = 0.0
    for d, w in weight.items():
        keep = pi.get(d, 0.0)
        if keep >= 1.0:
            continue
        factor = (1.0 / keep - 1.0) if keep > 0 else math.inf
        anticipated += factor * w * w * p[d] * (1 - p[d])
        realised += factor * w * w * (y[d] - p[d]) ** 2
    return anticipated, realised


def fitted(collection, qrels: str, runs, level: int, fraction: float):
    """A one-shot simulation at ``fraction`` (seed 11): its pool, runs, truth and
    cross-fitted p."""
    return simulation_run(
        collection=collection,
        qrels_path=qrels,
        runs=runs,
        config=SimulationConfig(
            depth=100,
            sample_size=0,
            sample_fraction=fraction,
            seed=11,
            relevance_level=level,
        ),
    )


def probabilities(d, q: str, prior: dict[str, float]) -> dict[str, float]:
    return {x: min(max(d.crossfit.get(q, {}).get(x, 0.0), 0.0), 1.0) for x in prior}


def spread(rankings, p):
    """Per document: the AP importance ``a`` and the design's target ``a sqrt(p(1-p))``."""
    weight = ap_importance(rankings, p)
    return weight, {x: weight[x] * math.sqrt(p[x] * (1 - p[x])) for x in weight}


def floored(prior, sigma, n):
    """``π ∝`` a fifth of statAP's prior plus four fifths of ``sigma``, expected size
    ``n`` (capped at 1)."""
    q_total = math.fsum(prior.values())
    s_total = math.fsum(sigma.values()) or 1.0
    return capped_probabilities(
        {
            x: FLOOR * prior[x] / q_total + (1 - FLOOR) * sigma[x] / s_total
            for x in prior
        },
        n,
    )


def main() -> None:
    name, qrels, level = sys.argv[1], sys.argv[2], int(sys.argv[3])
    collection = Collection.objects.get(name=name)
    runs = list(Run.objects.filter(collection=collection))  # imported by simulate
    d = fitted(collection, qrels, runs, level, 0.10)
    smaller = {}
    if "--fitted" in sys.argv[4:]:
        smaller = {f: fitted(collection, qrels, runs, level, f) for f in (0.05, 0.025)}
    sizes = [len(v) for v in d.pool.values()]
    mean_pool = sum(sizes) / len(sizes)
    totals: dict[str, list[float]] = {}

    def add(label, pi, weight, p, y):
        a, r = variances(pi, weight, p, y)
        row = totals.setdefault(label, [0.0, 0.0])
        row[0] += a
        row[1] += r

    for q in sorted(d.pool):
        rankings = {
            n: sorted(r[q], key=lambda x: (-r[q][x], x))[: d.config.depth]
            for n, r in d.runs.items()
            if q in r
        }
        prior = pool_distribution(rankings)
        p = probabilities(d, q, prior)
        y = {x: float(d.truth.get(q, {}).get(x, 0) >= level) for x in prior}
        weight, sigma = spread(rankings, p)
        n10, n5 = 0.10 * mean_pool, 0.05 * mean_pool
        designs = {
            "statap10": statap_pi(prior, n10),
            "statap5": statap_pi(prior, n5),
            "optimal5": capped_probabilities(
                {x: max(s, 1e-12) for x, s in sigma.items()}, n5
            ),
            "optimal5-floor": floored(prior, sigma, n5),
        }
        if smaller:
            p5 = probabilities(smaller[0.05], q, prior)
            _, guide25 = spread(rankings, probabilities(smaller[0.025], q, prior))
            _, guide5 = spread(rankings, p5)
            # Two rounds: statAP's 2.5%, then the 2.5% model's optimum for the other
            # 2.5% (drawn independently; the best weights are 1/π overall).
            first = statap_pi(prior, n5 / 2)
            second = floored(prior, guide25, n5 / 2)
            estimated_p5 = {
                "statap5/p5": designs["statap5"],
                "rounds2/guide2.5": {
                    x: 1 - (1 - first[x]) * (1 - second[x]) for x in prior
                },
                "optimal5-floor/guide2.5": floored(prior, guide25, n5),
                "optimal5-floor/guide5": floored(prior, guide5, n5),
            }
        for label, pi in designs.items():
            add(label, pi, weight, p, y)
        if smaller:
            for label, pi in estimated_p5.items():
                add(label, pi, weight, p5, y)
    base_a, base_r = totals["statap10"]
    print(f"{name}: {len(d.pool)} topics, mean pool {mean_pool:.0f}")
    print("| design | anticipated / statap10 | realised / statap10 |")
    print("|---|---|---|")
    for label, (a, r) in totals.items():
        print(f"| {label} | {a / base_a:.3f} | {r / base_r:.3f} |")


if __name__ == "__main__":
    main()
