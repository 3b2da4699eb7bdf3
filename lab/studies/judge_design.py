"""Does a judge-shaped statAP sample estimate each topic's R with less variance?

The pool of each topic is the union of the runs' top ``--depth`` documents
(``--runs``, read by the product's run parser and ranked as trec_eval does); its
statAP distribution is the product's (:func:`nuggets_app.ir.sampling.pool_distribution`).
The people's labels are the qrels (``--qrels``; a pooled document the qrels do not
hold is not relevant); R per topic is the pool's count of relevant documents at
``--relevance-level``. A simulated graded judge per ``--flip`` rate gives every pooled
document the truth's call, flipped with that probability (relevant -> 0, not relevant
-> the level), from a seed of its own. The sample of each topic holds ``--fraction`` of
its pool, and each design is drawn with the generator the product seeds
(``"{seed}:{qid}"``) by the function the product's ``sample`` command calls:

* ``statap``: the product's plain statAP (distinct-count stopping, approximate π);
* ``statap-exact``: statAP's distribution with the judge design's fixed number of
  draws (a judge of weight 0: exact π);
* ``judge-F a=W``: the judge-shaped design with flip rate F at weight W.

R̂ is statAP's Horvitz-Thompson count (:attr:`nuggets_app.ir.prels.TopicPrels.est_r`).
Reported per design, over topics: the mean over seeds of R̂ - R (bias), the variance of
R̂ over seeds, and, for the exact designs, the exact design variance
``Σ_d Σ_e (π_de - π_d π_e) y_d y_e / (π_d π_e)`` with ``π_de = 1 - (1-p_d)^K -
(1-p_e)^K + (1-p_d-p_e)^K``; and the mean number of documents judged per topic.

Usage: python -m lab.studies.judge_design --runs DIR --qrels FILE [--depth 10]
       [--fraction 0.1] [--seeds 10] [--relevance-level 2] [--flip 0.1 --flip 0.3]
       [--weight 0.5 --weight 0.8] --json OUT [--markdown]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nuggets_app.importers.qrels import parse_qrels
from nuggets_app.importers.runs import parse_run, rank_by_score
from nuggets_app.ir.judge_sampling import draw_judge_shaped, judge_shaped_distribution
from nuggets_app.ir.judge_values import GRADED, relevance_strength
from nuggets_app.ir.prels import TopicPrels
from nuggets_app.ir.sampling import draw_statap, pool_distribution


def read_pools(folder: Path, depth: int) -> dict[str, dict[str, float]]:
    """qid -> the pool's statAP distribution over the runs' top ``depth``."""
    rankings: dict[str, dict[str, list[str]]] = {}
    for path in sorted(folder.glob("*.run*")):
        for line in rank_by_score(parse_run(path)):
            if line.rank <= depth:
                rankings.setdefault(line.qid, {}).setdefault(path.name, []).append(
                    line.docno
                )
    return {qid: pool_distribution(runs) for qid, runs in rankings.items()}


def judge_strengths(
    pools: Mapping[str, Mapping[str, float]],
    truth: Mapping[tuple[str, str], int],
    level: int,
    flip: float,
) -> dict[str, dict[str, float]]:
    """A graded judge's strengths (as the product reads a graded judge): the truth's
    call, flipped with probability ``flip``."""
    rng = random.Random(f"judge:{flip}")
    strengths: dict[str, dict[str, float]] = {}
    for qid in sorted(pools):
        for docno in sorted(pools[qid]):
            relevant = truth.get((qid, docno), 0) >= level
            if rng.random() < flip:
                relevant = not relevant
            grade = level if relevant else 0
            strengths.setdefault(qid, {})[docno] = relevance_strength(
                grade, kind=GRADED, cut=level
            )
    return strengths


def exact_variance(p: Mapping[str, float], draws: int, relevant: list[str]) -> float:
    """The Horvitz-Thompson count's design variance under ``draws`` draws from ``p``."""
    pi = {d: -math.expm1(draws * math.log1p(-p[d])) for d in relevant}
    total = 0.0
    for d in relevant:
        total += (1 - pi[d]) / pi[d]
        for e in relevant:
            if e <= d:
                continue
            miss = (1 - p[d]) ** draws + (1 - p[e]) ** draws
            joint = 1 - miss + (1 - p[d] - p[e]) ** draws
            total += 2 * (joint - pi[d] * pi[e]) / (pi[d] * pi[e])
    return total


def study(args: argparse.Namespace) -> dict[str, Any]:
    pools = read_pools(args.runs, args.depth)
    truth = {(r.qid, r.docno): r.rel for r in parse_qrels(args.qrels, "qrels")}
    judged_qids = {q for q, _ in truth}
    pools = {q: p for q, p in pools.items() if q in judged_qids}
    strengths = {
        f: judge_strengths(pools, truth, args.relevance_level, f) for f in args.flip
    }
    names = ["statap", "statap-exact"] + [
        f"judge-{f:g} a={w:g}" for f in args.flip for w in args.weight
    ]
    out: dict[str, dict[str, list[float]]] = {
        name: {"bias": [], "var": [], "exact_var": [], "judged": []} for name in names
    }
    for qid in sorted(pools):
        prior = pools[qid]
        relevant = sorted(
            d for d in prior if truth.get((qid, d), 0) >= args.relevance_level
        )
        if not relevant:
            continue
        n = max(2, round(args.fraction * len(prior)))
        for name in names:
            shape: dict[str, float]
            weight: float | None
            if name == "statap":
                shape, weight = {}, None
            elif name == "statap-exact":
                shape, weight = {}, 0.0
            else:
                flip, w = name.removeprefix("judge-").split(" a=")
                shape, weight = strengths[float(flip)][qid], float(w)
            estimates, judged, draws = [], [], 0
            for seed in range(1, args.seeds + 1):
                rng = random.Random(f"{seed}:{qid}")
                if weight is None:
                    drawn = draw_statap(prior, n, rng)
                else:
                    drawn = draw_judge_shaped(prior, shape, n, rng, weight)
                draws = drawn.draws
                prels = TopicPrels(
                    qid,
                    rel={d: int(d in relevant) for d in drawn.order},
                    inclusion_prob={d: drawn.inclusion[d] for d in drawn.order},
                )
                estimates.append(prels.est_r)
                judged.append(len(drawn.order))
            series = out[name]
            series["bias"].append(statistics.fmean(estimates) - len(relevant))
            series["var"].append(statistics.variance(estimates))
            series["judged"].append(statistics.fmean(judged))
            if weight is not None and n < len(prior):
                p = judge_shaped_distribution(prior, shape, weight)
                series["exact_var"].append(exact_variance(p, draws, relevant))
    return _summary(args, out)


def _summary(args, out) -> dict[str, Any]:
    base = out["statap-exact"]["exact_var"]
    rows = {}
    for name, series in out.items():
        exact = series["exact_var"]
        ratios = (
            [a / b for a, b in zip(exact, base, strict=True) if b > 0] if exact else []
        )
        rows[name] = {
            "topics": len(series["var"]),
            "mean_bias": statistics.fmean(series["bias"]),
            "mean_var_over_seeds": statistics.fmean(series["var"]),
            "mean_exact_var": statistics.fmean(exact) if exact else None,
            "median_exact_var_ratio": statistics.median(ratios) if ratios else None,
            "mean_judged": statistics.fmean(series["judged"]),
        }
    return {
        "depth": args.depth,
        "fraction": args.fraction,
        "seeds": args.seeds,
        "relevance_level": args.relevance_level,
        "designs": rows,
    }


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "| design | topics | judged per topic | mean bias of R̂ | variance of R̂ "
        "over seeds | exact design variance | median ratio to statAP (exact) |",
        "|---|---|---|---|---|---|---|",
    ]

    def fmt(x: float | None, digits: int = 2) -> str:
        return "n/a" if x is None else f"{x:.{digits}f}"

    for name, row in report["designs"].items():
        lines.append(
            f"| {name} | {row['topics']} | {fmt(row['mean_judged'], 1)} | "
            f"{fmt(row['mean_bias'])} | {fmt(row['mean_var_over_seeds'], 1)} | "
            f"{fmt(row['mean_exact_var'], 1)} | {fmt(row['median_exact_var_ratio'])} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, required=True)
    parser.add_argument("--qrels", type=Path, required=True)
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--fraction", type=float, default=0.1)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--relevance-level", type=int, default=2)
    parser.add_argument("--flip", type=float, action="append")
    parser.add_argument("--weight", type=float, action="append")
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    args.flip = args.flip or [0.1, 0.3]
    args.weight = args.weight or [0.5, 0.8]
    report = study(args)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    if args.markdown:
        sys.stdout.write(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
