"""Tables of docs/results/diversity.md from experiment.py's seed*.json files.

Usage: python lab/studies/diversity/summarize.py var/results/diversity/results
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

MEASURES = ("alpha_nDCG@10", "ERR_IA@10", "StRecall@10")
VARIANTS = (
    "sample",
    "sample+inferred@0.3",
    "sample+inferred@0.5",
    "sample+inferred@0.8",
    "sample+inferred@0.5, aspects shuffled",
)


def mean_sd(values: list[float], digits: int = 3) -> str:
    if len(values) < 2:
        return f"{values[0]:.{digits}f}" if values else ""
    return (
        f"{statistics.mean(values):.{digits}f} ({statistics.stdev(values):.{digits}f})"
    )


def tau_table(results: list[dict], measure: str) -> list[str]:
    head = "| seed | " + " | ".join(VARIANTS) + " |"
    rows = [head, "|---" * (len(VARIANTS) + 1) + "|"]
    for r in results:
        cells = [f"{r['tau'][v][measure]:.3f}" for v in VARIANTS]
        rows.append(f"| {r['seed']} | " + " | ".join(cells) + " |")
    cells = [mean_sd([r["tau"][v][measure] for r in results]) for v in VARIANTS]
    rows.append("| mean (sd) | " + " | ".join(cells) + " |")
    return rows


def _lines_cell(x: dict) -> str:
    return f"{x['lines']} ({x['precision']:.3f}, {x['recall']:.3f})"


def lines_table(results: list[dict]) -> list[str]:
    rows = [
        "| seed | judged | full lines | sample lines (P, R) | "
        + " | ".join(f"{v} lines (P, R)" for v in VARIANTS[1:])
        + " | inferred@0.5 alone: lines, P, R (unjudged) |",
        "|---" * (4 + len(VARIANTS)) + "|",
    ]
    for r in results:
        lines = r["lines"]
        inferred = lines["sample+inferred@0.5"]["inferred"]
        rows.append(
            f"| {r['seed']} | {r['counts']['judged']} | {lines['full']['lines']} | "
            + " | ".join(_lines_cell(lines[v]) for v in VARIANTS)
            + f" | {inferred['lines']}, {inferred['precision']:.3f}, "
            f"{inferred['recall']:.3f} |"
        )
    return rows


def means_table(results: list[dict]) -> list[str]:
    """Each qrels' measure averaged over runs (then mean over seeds)."""
    names = ("full", *VARIANTS)
    rows = [
        "| measure (mean over runs) | " + " | ".join(names) + " |",
        "|---" * (len(names) + 1) + "|",
    ]
    for m in MEASURES:
        cells = []
        for v in names:
            per_seed = [
                statistics.mean(run[m] for run in r["means"][v].values())
                for r in results
            ]
            cells.append(mean_sd(per_seed))
        rows.append(f"| {m} | " + " | ".join(cells) + " |")
    return rows


def main(folder: Path) -> None:
    results = sorted(
        (json.loads(p.read_text()) for p in folder.glob("seed*.json")),
        key=lambda r: r["seed"],
    )
    first = results[0]["counts"]
    print(
        f"{first['topics']} topics, {first['runs']} runs, "
        f"{first['subtopics_full']} subtopics with a matched document\n"
    )
    for m in MEASURES:
        print(f"### Kendall's tau against the full subtopic qrels: {m}\n")
        print("\n".join(tau_table(results, m)) + "\n")
    print("### Lines of each qrels, against the full lines\n")
    print("\n".join(lines_table(results)) + "\n")
    print("### The measures' level\n")
    print("\n".join(means_table(results)))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
