"""Tables for docs/results/graded.md from lab/studies/graded/experiment.py's JSON.

Usage: python lab/studies/graded/summarize.py RESULTS_DIR
(RESULTS_DIR/<collection>/seed<S>.json). Per collection: Kendall's tau of each qrels'
system ranking against the full graded qrels, per seed and mean (sd), for nDCG@10 and
nDCG; then the grade counts of the inferred lines.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

VARIANTS = [
    "sample",
    "statAP-style (sample)",
    "sample+nuggets",
    "sample+model",
    "expected (model)",
]
MEASURES = ["nDCG@10", "nDCG"]


def main(root: Path) -> None:
    for coll in sorted(p for p in root.iterdir() if p.is_dir()):
        files = sorted(coll.glob("seed*.json"), key=lambda p: int(p.stem[4:]))
        if not files:
            continue
        results = [json.loads(f.read_text()) for f in files]
        c0 = results[0]["counts"]
        print(f"### {coll.name} ({c0['topics']} topics, {c0['runs']} runs)\n")
        head = " | ".join(f"{v} {m}" for m in MEASURES for v in VARIANTS)
        print(f"| seed | judged | {head} |")
        print("|---" * (2 + len(MEASURES) * len(VARIANTS)) + "|")
        for f, r in zip(files, results, strict=True):
            cells = " | ".join(
                f"{r['tau'][v][m]:.3f}" if v in r["tau"] else "-"
                for m in MEASURES
                for v in VARIANTS
            )
            print(f"| {f.stem[4:]} | {r['counts']['judged']} | {cells} |")
        means: list[str] = []
        for m in MEASURES:
            for v in VARIANTS:
                xs = [r["tau"][v][m] for r in results if v in r["tau"]]
                if not xs:
                    means.append("-")
                    continue
                sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
                means.append(f"{statistics.mean(xs):.3f} ({sd:.3f})")
        print(f"| mean (sd) | | {' | '.join(means)} |\n")
        print(
            "| seed | full qrels by grade | model-graded lines by grade | "
            "nugget-graded lines by grade |"
        )
        print("|---|---|---|---|")
        for f, r in zip(files, results, strict=True):
            c = r["counts"]
            print(
                f"| {f.stem[4:]} | {c['full_by_grade']} | {c['model_by_grade']} | "
                f"{c['nuggets_by_grade']} |"
            )
        print()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
