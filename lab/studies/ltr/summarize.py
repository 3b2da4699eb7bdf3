"""Tables for docs/results/ltr.md from the experiment's JSON files.

Usage: python lab/studies/ltr/summarize.py RESULTS_DIR
RESULTS_DIR holds <collection>/seed<S>.json (lab/studies/ltr/experiment.py output).
Prints, per collection, each seed's means and the mean (sd) over seeds, then the
paired difference (b) - (a) over topics pooled across seeds with a paired t-test.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from scipy import stats

ARMS = ["sample", "sample+inferred", "full qrels", "bm25"]


def main(root: Path) -> None:
    for coll in sorted(p for p in root.iterdir() if p.is_dir()):
        files = sorted(coll.glob("seed*.json"), key=lambda p: int(p.stem[4:]))
        if not files:
            continue
        results = [json.loads(f.read_text()) for f in files]
        measures = list(results[0]["mean"]["sample"])
        print(f"### {coll.name}\n")
        head = " | ".join(f"{arm} {m}" for m in measures for arm in ARMS)
        print(f"| seed | topics | judged | inferred | {head} |")
        print("|---" * (4 + len(measures) * len(ARMS)) + "|")
        for f, r in zip(files, results, strict=True):
            c = r["counts"]
            cells = " | ".join(
                f"{r['mean'][arm][m]:.4f}" for m in measures for arm in ARMS
            )
            print(
                f"| {f.stem[4:]} | {r['topics']} | {c['person']} | {c['inferred']} "
                f"| {cells} |"
            )
        means: list[str] = []
        for m in measures:
            for arm in ARMS:
                values = [r["mean"][arm][m] for r in results]
                sd = statistics.stdev(values) if len(values) > 1 else 0.0
                means.append(f"{statistics.mean(values):.4f} ({sd:.4f})")
        print(f"| mean (sd) | | | | {' | '.join(means)} |\n")
        print("| measure | comparison | mean difference | topics x seeds | t | p |")
        print("|---|---|---|---|---|---|")
        for m in measures:
            for a, b in [
                ("sample", "sample+inferred"),
                ("sample", "bm25"),
                ("sample+inferred", "full qrels"),
            ]:
                xs, ys = [], []
                for r in results:
                    pa, pb = r["per_topic"][a][m], r["per_topic"][b][m]
                    for q in sorted(pa):
                        xs.append(pa[q])
                        ys.append(pb[q])
                test = stats.ttest_rel(ys, xs)
                diff = statistics.mean(y - x for x, y in zip(xs, ys, strict=True))
                print(
                    f"| {m} | {b} - {a} | {diff:+.4f} | {len(xs)} | "
                    f"{test.statistic:.2f} | {test.pvalue:.3g} |"
                )
        print()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
