"""Tables of the outside-pool study (docs/results/reusability.md, "Documents outside
the pool: calibration, intervals and top-ups") from the reports of ``run.sh``.

Usage: python lab/studies/outside_pool/summarize.py [DIR]   (default
var/results/outside_pool; reads DIR/<collection>/leave-one-group-out-seed<S>.json)
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path


def _covered(ci, truth) -> bool:
    return ci[0] <= truth <= ci[1]


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def seed_row(report: dict) -> dict:
    rows = report["runs"]
    full = report["full"]["map"]
    groups = report["unpooled"].values()
    raw = math.fsum(g["expected_relevant"] for g in groups)
    cal = math.fsum(g.get("calibrated_relevant", math.nan) for g in groups)
    true = math.fsum(g["true_relevant"] for g in groups)
    judged = math.fsum(g.get("judged", math.nan) for g in groups)
    cal_judged = math.fsum(
        g.get("calibrated_relevant_judged", math.nan) for g in groups
    )
    before = [r["model_assisted"] for r in rows]
    after = [
        r.get("top_up", {}).get("model_assisted", r["model_assisted"]) for r in rows
    ]
    truth = [full[r["run"]] for r in rows]
    # The pool's truth (every run pooled at the depth) and the ceiling (a judge of
    # the experiment's pool and the run's own list): reports before these were
    # recorded give NaN.
    pool = [r["full"].get("pool_map", math.nan) for r in rows]
    reach = [r["full"].get("reachable_map", math.nan) for r in rows]
    rel = [abs(b["map"] - t) / t for b, t in zip(before, truth, strict=True) if t > 0]
    rel_after = [
        abs(a["map"] - t) / t for a, t in zip(after, truth, strict=True) if t > 0
    ]
    pooled = report.get("pooled_rel_error", [])
    pooled_pool = report.get("pooled_rel_error_pool", [])
    rel_pool = [
        abs(b["map"] - t) / t for b, t in zip(before, pool, strict=True) if t > 0
    ]
    rel_pool_after = [
        abs(a["map"] - t) / t for a, t in zip(after, pool, strict=True) if t > 0
    ]
    share = [
        r["model_assisted"]["var_model"]
        / (r["model_assisted"]["var_model"] + r["model_assisted"]["var_sampling"])
        for r in rows
        if r["model_assisted"].get("var_model", 0) > 0
    ]
    return {
        "runs": len(rows),
        "unpooled": int(math.fsum(g["documents"] for g in groups)),
        "sum_p": raw,
        "sum_q": cal,
        "relevant": true,
        "ratio_q": cal / true if true else math.inf,
        "cover": sum(_covered(b["ci"], t) for b, t in zip(before, truth, strict=True))
        / len(rows),
        "cover_top_up": sum(
            _covered(a["ci"], t) for a, t in zip(after, truth, strict=True)
        )
        / len(rows),
        "cover_pool": sum(
            _covered(b["ci"], t) for b, t in zip(before, pool, strict=True)
        )
        / len(rows),
        "cover_pool_top_up": sum(
            _covered(a["ci"], t) for a, t in zip(after, pool, strict=True)
        )
        / len(rows),
        "ceiling": math.fsum(c - t for c, t in zip(reach, truth, strict=True))
        / len(rows),
        "ceiling_pool": math.fsum(c - t for c, t in zip(reach, pool, strict=True))
        / len(rows),
        "relevant_in_pool": report["full"].get("relevant", {}),
        "judged": judged,
        "rel_pool": _mean(rel_pool),
        "rel_pool_top_up": _mean(rel_pool_after),
        "rel_pooled_pool": _mean(pooled_pool),
        "ratio_q_judged": cal_judged / true if true else math.inf,
        "rel": sum(rel) / len(rel),
        "rel_top_up": sum(rel_after) / len(rel_after),
        "rel_pooled": sum(pooled) / len(pooled) if pooled else math.nan,
        "width": sum(b["ci"][1] - b["ci"][0] for b in before) / len(rows),
        "width_top_up": sum(a["ci"][1] - a["ci"][0] for a in after) / len(rows),
        "model_share": sum(share) / len(share) if share else 0.0,
        "top_up_docs": sum(r.get("top_up", {}).get("documents", 0) for r in rows),
        "ratios": sorted(round(g.get("ratio", math.nan), 2) for g in groups),
    }


def main() -> None:
    base = Path(sys.argv[1] if len(sys.argv) > 1 else "var/results/outside_pool")
    for folder in sorted(p for p in base.iterdir() if p.is_dir()):
        reports = sorted(folder.glob("leave-one-group-out-seed*.json"))
        if not reports:
            continue
        seeds = [
            (path.stem.rsplit("seed", 1)[1], seed_row(json.loads(path.read_text())))
            for path in reports
        ]
        print(f"\n{folder.name}")
        print(
            "| seed | held-out runs | unpooled docs | Σ p | Σ calibrated p | relevant "
            "| calibrated/relevant | coverage | coverage, top-up | mean rel error "
            "| top-up | pooled runs | mean width | top-up | model share | top-up docs |"
        )
        print("|" + "---|" * 16)
        for seed, r in seeds:
            print(
                f"| {seed} | {r['runs']} | {r['unpooled']} | {r['sum_p']:.1f} | "
                f"{r['sum_q']:.1f} | {r['relevant']:.0f} | {r['ratio_q']:.2f} | "
                f"{r['cover']:.3f} | {r['cover_top_up']:.3f} | {r['rel']:.3f} | "
                f"{r['rel_top_up']:.3f} | {r['rel_pooled']:.3f} | {r['width']:.3f} | "
                f"{r['width_top_up']:.3f} | {r['model_share']:.2f} | "
                f"{r['top_up_docs']} |"
            )
            print(f"<!-- group ratios: {r['ratios']} -->")
        print(
            "\n| seed | relevant (full qrels) | in the pool | coverage of the pool's "
            "truth | top-up | ceiling - full | ceiling - pool's truth "
            "| unpooled judged | calibrated/relevant, judged ones "
            "| mean rel error | top-up | pooled runs |"
        )
        print("|" + "---|" * 12)
        for seed, r in seeds:
            counts = r["relevant_in_pool"]
            print(
                f"| {seed} | {counts.get('full', '')} | {counts.get('in_pool', '')} | "
                f"{r['cover_pool']:.3f} | {r['cover_pool_top_up']:.3f} | "
                f"{r['ceiling']:+.4f} | {r['ceiling_pool']:+.4f} | "
                f"{r['judged']:.0f} | {r['ratio_q_judged']:.2f} | "
                f"{r['rel_pool']:.3f} | {r['rel_pool_top_up']:.3f} | "
                f"{r['rel_pooled_pool']:.3f} |"
            )


if __name__ == "__main__":
    main()
