"""Summarise ``simulate`` reports with and without a judge (docs/results/judges-evidence.md).

Usage (from the repository root):
    python lab/studies/judges/summarize_evidence.py REPORTS

REPORTS holds one folder per run, ``TAG-seedS/report.json`` (TAG ``none`` for the runs
without a judge). One row per TAG over the seeds every TAG has: the fits that kept the
judge, the model-assisted estimate's coverage of the pooled truth, mean (estimate -
truth) over runs, mean half-width and its ratio to ``none``'s on the same seeds, and
Kendall's tau of the model-assisted MAP and of statMAP against the truth.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def _reports(root: Path) -> dict[str, dict[int, dict]]:
    out: dict[str, dict[int, dict]] = {}
    for path in sorted(root.glob("*-seed*/report.json")):
        tag, _, seed = path.parent.name.rpartition("-seed")
        out.setdefault(tag, {})[int(seed)] = json.loads(path.read_text())
    return out


def _mean_sd(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.4f} ± {sd:.4f}"


def main(root: Path) -> None:
    reports = _reports(root)
    seeds = sorted(set.intersection(*(set(r) for r in reports.values())))
    base = reports.get("none", {})
    print(f"seeds: {len(seeds)} ({', '.join(map(str, seeds))})\n")
    print(
        "| judge | fits that kept it | coverage | mean (estimate - truth) | "
        "half-width | width ratio to none | tau model-assisted | tau statMAP |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for tag in ["none", *sorted(t for t in reports if t != "none")]:
        rows = [reports[tag][s] for s in seeds]
        ma = [r["estimators"]["model_assisted"] for r in rows]
        st = [r["estimators"]["statap"] for r in rows]
        judges = [r["families"].get("judges", []) for r in rows]
        name = judges[0][0]["judge"] if judges and judges[0] else "no judge"
        kept = sum(bool(j and j[0]["kept"]) for j in judges)
        ratio = (
            statistics.fmean(
                m["half_width"] / base[s]["estimators"]["model_assisted"]["half_width"]
                for m, s in zip(ma, seeds, strict=True)
            )
            if base
            else float("nan")
        )
        print(
            f"| {tag} ({name}) | {kept if name != 'no judge' else '-'} / {len(rows)} | "
            f"{_mean_sd([m['coverage'] for m in ma])} | "
            f"{_mean_sd([m['shift'] for m in ma])} | "
            f"{_mean_sd([m['half_width'] for m in ma])} | {ratio:.3f} | "
            f"{_mean_sd([m['tau'] for m in ma])} | {_mean_sd([s_['tau'] for s_ in st])} |"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
