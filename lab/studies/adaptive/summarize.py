"""Summarise var/results/adaptive/reports into the tables of docs/results/adaptive.md.

Per collection and arm, means over the seeds present: tau and RMSE of MAP against the
full qrels (``systems.map.full``), mean 95% interval width and coverage (share of runs
whose pooled-truth MAP lies in the interval), for the default estimator
(``model_assisted``) and statAP; documents judged (all topics). Arms: ``one10``,
``rounds5`` (5% in two rounds), ``rounds3`` and ``rounds4`` (5% in three and four
rounds), ``top5``.
Usage: python lab/studies/adaptive/summarize.py [REPORTS]
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

ARMS = ("one10", "rounds5", "rounds3", "rounds4", "top5")
ADAPTIVE = ("rounds5", "rounds3", "rounds4")
ORDER = ("dl19", "adi", "cacm", "cisi", "cranfield", "lisa", "medline", "npl-vaswani")


def figures(report: dict, estimator: str) -> dict[str, float]:
    full = report["systems"]["map"]["full"]
    est = report["estimators"][estimator]
    runs = sorted(full)
    rmse = math.sqrt(sum((est["map"][r] - full[r]) ** 2 for r in runs) / len(runs))
    widths = [hi - lo for lo, hi in (est["ci"] or {}).values()] if est["ci"] else []
    return {
        "tau": est["tau"],
        "rmse": rmse,
        "width": sum(widths) / len(widths) if widths else math.nan,
        "coverage": est["coverage"] if est["coverage"] is not None else math.nan,
    }


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def main(folder: Path) -> None:
    print(
        "| collection | arm | seeds | judged | estimator | tau | RMSE MAP | "
        "CI width | coverage |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for c in ORDER:
        for arm in ARMS:
            reports = [
                json.loads(p.read_text())
                for p in sorted((folder / c).glob(f"{arm}-seed*/report.json"))
            ]
            if not reports:
                continue
            judged = mean([float(r["judged"]) for r in reports])
            for estimator in ("model_assisted", "statap"):
                rows = [figures(r, estimator) for r in reports]
                cells = [
                    mean([row[k] for row in rows])
                    for k in ("tau", "rmse", "width", "coverage")
                ]
                print(
                    f"| {c} | {arm} | {len(reports)} | {judged:.0f} | "
                    f"{estimator} | " + " | ".join(f"{v:.3f}" for v in cells) + " |"
                )


def _seeds(folder: Path, c: str, arm: str) -> set[str]:
    return {
        p.parent.name.split("-seed")[1]
        for p in (folder / c).glob(f"{arm}-seed*/report.json")
    }


def verdicts(folder: Path) -> None:
    """Per collection and adaptive arm (5% in two, three or four rounds), the done-when
    check of issue 23 on the default estimator: the arm reaches one10's tau and MAP
    RMSE (means over the seeds both arms have), and its coverage is at least 0.9."""
    print(
        "| collection | arm | seeds | tau one10 | tau arm | RMSE one10 | RMSE arm | "
        "coverage one10 | coverage arm | holds |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for c in ORDER:
        for arm in ADAPTIVE:
            seeds = sorted(_seeds(folder, c, "one10") & _seeds(folder, c, arm))
            if not seeds:
                continue
            figs = {}
            for name in ("one10", arm):
                rows = [
                    figures(
                        json.loads(
                            (folder / c / f"{name}-seed{s}" / "report.json").read_text()
                        ),
                        "model_assisted",
                    )
                    for s in seeds
                ]
                figs[name] = {
                    k: mean([r[k] for r in rows]) for k in ("tau", "rmse", "coverage")
                }
            a, b = figs["one10"], figs[arm]
            holds = (
                b["tau"] >= a["tau"] and b["rmse"] <= a["rmse"] and b["coverage"] >= 0.9
            )
            print(
                f"| {c} | {arm} | {len(seeds)} | {a['tau']:.3f} | {b['tau']:.3f} | "
                f"{a['rmse']:.3f} | {b['rmse']:.3f} | {a['coverage']:.3f} | "
                f"{b['coverage']:.3f} | {'yes' if holds else 'no'} |"
            )


if __name__ == "__main__":
    where = Path(sys.argv[1] if len(sys.argv) > 1 else "var/results/adaptive/reports")
    main(where)
    print()
    verdicts(where)
