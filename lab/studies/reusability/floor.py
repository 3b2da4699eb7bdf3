"""The accuracy floor of docs/results/reusability.md: how far runs that *did* build the
pool move in rank, on the same collection, sample size and truth.

Usage (from the repository root): python lab/studies/reusability/floor.py [PATTERN]
Reads the DL19 reports matching PATTERN under var/results (default
``fairness/dl19/d100-size10-seed*``: all 37 runs pooled, a 10% statAP sample; the same
setting is ``adaptive/reports-beale/dl19/one10-seed*``, with the estimator of
that page) and the full-qrels MAP of every run from a DL19
reusability report; prints, per seed and estimator, the mean absolute rank error and
the largest rank drop of all runs, as reusability.py defines them for held-out runs.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3] / "var/results"
ESTIMATORS = ("sample_only", "statap", "model_assisted")


def ranks(scores: dict[str, float]) -> dict[str, int]:
    order = sorted(scores, key=lambda run: (-scores[run], run))
    return {run: i for i, run in enumerate(order, 1)}


def main() -> None:
    full = json.loads(
        (ROOT / "reusability/dl19/leave-one-group-out-seed1.json").read_text()
    )["full"]["map"]
    truth = ranks(full)
    rows: dict[str, list[tuple[float, int]]] = {e: [] for e in ESTIMATORS}
    print("| seed | estimator | mean abs rank error | largest rank drop |")
    print("|---|---|---|---|")
    pattern = sys.argv[1] if len(sys.argv) > 1 else "fairness/dl19/d100-size10-seed*"
    for path in sorted(ROOT.glob(f"{pattern}/report.json")):
        report = json.loads(path.read_text())
        seed = path.parent.name.rsplit("seed", 1)[1]
        for estimator in ESTIMATORS:
            found = ranks(report["estimators"][estimator]["map"])
            errors = [found[run] - truth[run] for run in full]
            mean = statistics.fmean(abs(e) for e in errors)
            rows[estimator].append((mean, max(errors)))
            print(f"| {seed} | {estimator} | {mean:.3f} | {max(errors)} |")
    print()
    print("| estimator | mean abs rank error (mean ± sd) | largest rank drop |")
    print("|---|---|---|")
    for estimator, values in rows.items():
        means = [m for m, _ in values]
        print(
            f"| {estimator} | {statistics.fmean(means):.3f} ± "
            f"{statistics.stdev(means):.3f} | {max(d for _, d in values)} |"
        )


if __name__ == "__main__":
    main()
