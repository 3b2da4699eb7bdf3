"""Summarise the DL19 simulations of the job's own fit with and without the semantic
features and the nugget choice (docs/results/semantic.md, section 2).

Usage: python lab/studies/semantic/summarize_job.py [DIR]
(default: var/results/semantic/job; one ``VARIANT-seedN/report.json`` per run, as
``lab/studies/semantic/run_job.sh`` writes them).

Per variant and seed, of the default estimator (model-assisted MAP): Kendall's tau
against the full-qrels ranking, coverage of the pooled-truth MAP by the 95%
intervals, mean half-width, mean shift (estimate minus pooled truth, averaged over
the runs); EAP's tau; which families the job kept and the nugget choice's held-out
log-losses. Then the mean over seeds of each variant, and each variant's mean paired
difference from ``lexical-keep`` over the seeds both have (sd over seeds).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[3] / "var/results/semantic/job"
VARIANTS = ("lexical-keep", "lexical-choice", "semantic-keep", "semantic-choice")
COLUMNS = ("tau", "coverage", "half_width", "shift", "eap_tau")
DIGITS = {"half_width": 4, "shift": 4}  # the others to 3 decimals


def row(report: dict) -> dict:
    """The figures of one report."""
    default = report["estimators"][report["default_estimator"]]
    truth = report["pooled_truth"]["map"]
    shifts = [default["map"][r] - truth[r] for r in default["map"] if r in truth]
    families = report.get("families") or {}
    choice = families.get("nugget_choice") or {}
    return {
        "tau": default["tau"],
        "coverage": default["coverage"],
        "half_width": default["half_width"],
        "shift": statistics.fmean(shifts),
        "eap_tau": report["tau"]["eap"],
        "kept": ", ".join(families.get("kept", [])) or "(every family)",
        "choice": (
            f"{choice['verdict']}: {choice['logloss_with']:.4f} / "
            f"{choice['logloss_without']:.4f}"
            if choice
            else "-"
        ),
    }


def main(directory: Path) -> None:
    found: dict[str, dict[int, dict]] = {}
    for path in sorted(directory.glob("*-seed*/report.json")):
        match = re.fullmatch(r"(.+)-seed(\d+)", path.parent.name)
        if match:
            found.setdefault(match[1], {})[int(match[2])] = row(
                json.loads(path.read_text())
            )
    print(
        "| variant | seed | tau | coverage | mean half-width | mean shift | EAP tau "
        "| families kept | nugget choice: log-loss with / without |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for variant in [v for v in VARIANTS if v in found] + sorted(
        set(found) - set(VARIANTS)
    ):
        seeds = found[variant]
        for seed in sorted(seeds):
            r = seeds[seed]
            cells = " | ".join(f"{r[c]:.{DIGITS.get(c, 3)}f}" for c in COLUMNS)
            print(f"| {variant} | {seed} | {cells} | {r['kept']} | {r['choice']} |")
        means = " | ".join(
            f"**{statistics.fmean(s[c] for s in seeds.values()):.{DIGITS.get(c, 3)}f}**"
            for c in COLUMNS
        )
        print(f"| {variant} | mean of {len(seeds)} | {means} | | |")
    _differences(found)


def _differences(found: dict[str, dict[int, dict]]) -> None:
    """Each variant against ``lexical-keep`` on the seeds both have: mean paired
    difference (and its standard deviation over seeds)."""
    base = found.get(VARIANTS[0], {})
    print()
    print("| against lexical-keep | seeds | " + " | ".join(COLUMNS) + " |")
    print("|---|---|" + "---|" * len(COLUMNS))
    for variant in VARIANTS[1:]:
        seeds = sorted(set(found.get(variant, {})) & set(base))
        if len(seeds) < 2:
            continue
        cells = []
        for c in COLUMNS:
            diffs = [found[variant][s][c] - base[s][c] for s in seeds]
            d = DIGITS.get(c, 3)
            mean, sd = statistics.fmean(diffs), statistics.stdev(diffs)
            cells.append(f"{mean:+.{d}f} ({sd:.{d}f})")
        print(f"| {variant} | {len(seeds)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else RESULTS)
