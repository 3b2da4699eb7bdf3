"""The one path's figures on TREC DL 2019 passages, per seed, beside the published ones.

Usage: python lab/studies/one_path/summarize.py DIR [PUBLISHED]
Reads DIR/dl19/d100-size<P>-seed<S>/report.json (``simulate`` through the product's
own path: the job's fit with the sample's design, the estimates of ``evaluate --job``)
and, with PUBLISHED, PUBLISHED/dl19/one<P>-seed<S>/report.json (the reports the
earlier pages quoted, made by the simulation's own model run). Prints, per sample
size and seed: the default estimator's Kendall tau and tau_AP against the full-qrels
ranking, its MAP RMSE against the pooled truth, its interval coverage and mean
half-width, and EAP's tau; then the means.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
from pathlib import Path

NAME = re.compile(r"d100-size(\d+)-seed(\d+)$")
PUBLISHED = re.compile(r"one(\d+)-seed(\d+)$")


def figures(report: dict) -> dict[str, float]:
    """The figures of one report."""
    est = report["estimators"]["model_assisted"]
    truth = report["pooled_truth"]["map"]
    rmse = math.sqrt(statistics.fmean((est["map"][r] - truth[r]) ** 2 for r in truth))
    widths = [(hi - lo) / 2 for lo, hi in est["ci"].values()]
    return {
        "tau": est["tau"],
        "tau_ap": est["tau_ap"],
        "rmse": rmse,
        "coverage": est["coverage"],
        "half_width": statistics.fmean(widths),
        "eap_tau": report["estimators"]["eap"]["tau"],
    }


def _read(root: Path, pattern: re.Pattern[str]) -> dict[tuple[int, int], dict]:
    found = {}
    for path in sorted(root.glob("*/report.json")):
        match = pattern.search(path.parent.name)
        if match:
            key = (int(match.group(1)), int(match.group(2)))
            found[key] = figures(json.loads(path.read_text()))
    return found


def main(argv: list[str]) -> None:
    ours = _read(Path(argv[0]) / "dl19", NAME)
    theirs = _read(Path(argv[1]) / "dl19", PUBLISHED) if len(argv) > 1 else {}
    keys = ("tau", "tau_ap", "rmse", "coverage", "half_width", "eap_tau")
    print("| size | seed | path | " + " | ".join(keys) + " |")
    print("|" + " --- |" * (len(keys) + 3))
    for size in sorted({s for s, _ in ours}, reverse=True):
        for label, table in (("one path", ours), ("published", theirs)):
            rows = [(seed, f) for (s, seed), f in sorted(table.items()) if s == size]
            for seed, f in rows:
                cells = " | ".join(f"{f[k]:.3f}" for k in keys)
                print(f"| {size}% | {seed} | {label} | {cells} |")
            if rows:
                means = " | ".join(
                    f"{statistics.fmean(f[k] for _, f in rows):.3f}" for k in keys
                )
                print(f"| {size}% | mean of {len(rows)} | {label} | {means} |")


if __name__ == "__main__":
    main(sys.argv[1:])
