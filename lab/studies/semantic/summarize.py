"""Summarise the semantic evaluation of TREC TS (docs/results/semantic.md).

Usage: python lab/studies/semantic/summarize.py [DIR]   (default: var/results/semantic)
Reads DIR/ts{13,14}-{sentence,document}/report.json (``evaluate_matcher`` reports
with the semantic scorings) and prints Markdown: per set, every min-span, semantic
and combined scoring's pair AP, best F1 (threshold; P, R) and unit AP; the best
combined scoring's best F1 over the best min-span one; and each scoring's recall at
its own best-F1 threshold of the gold pairs whose human span repeats fewer than half
of the nugget's terms ("some (<50%)", the paraphrases of human-nuggets.md), of those
that repeat none, and of both together.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[3] / "var/results/semantic"

SETS = ("ts13-sentence", "ts13-document", "ts14-sentence", "ts14-document")
RATIO = 1.4
PARAPHRASE_RECALL = 0.30


def _recall(report: dict, name: str, bins: tuple[str, ...]) -> tuple[float, int]:
    by = report["recall_at_best_f1"][name]["recall_by_span_overlap"]
    gold = sum(by[b][0] for b in bins if b in by)
    found = sum(by[b][1] for b in bins if b in by)
    return (found / gold if gold else float("nan")), gold


def main(root: Path) -> None:
    print(
        "| set | scoring | pair AP | pair best F1 (t; P, R) | unit AP | recall <50% | recall none | recall <50% or none |"
    )
    print("|---|---|---|---|---|---|---|---|")
    checks = []
    for name in SETS:
        if not (root / name / "report.json").exists():
            continue
        report = json.loads((root / name / "report.json").read_text())
        kept = [
            s
            for s in report["scorings"]
            if s.startswith(
                ("minspan k=2 lam=0.8", "minspan k=3 lam=0.5", "semantic", "combined")
            )
        ]
        for scoring in kept:
            pair = report["scorings"][scoring]["pair"]
            unit = report["scorings"][scoring]["unit"]
            some, _ = _recall(report, scoring, ("some (<50%)",))
            none, _ = _recall(report, scoring, ("none",))
            both, _ = _recall(report, scoring, ("some (<50%)", "none"))
            print(
                f"| {name} | {scoring} | {pair['average_precision']:.3f} | "
                f"{pair['best_f1']:.3f} ({pair['best_threshold']:.3f}; "
                f"{pair['best_precision']:.3f}, {pair['best_recall']:.3f}) | "
                f"{unit['average_precision']:.3f} | {some:.3f} | {none:.3f} | {both:.3f} |"
            )
        f1 = {s: r["pair"]["best_f1"] for s, r in report["scorings"].items()}
        lexical = max((s for s in f1 if s.startswith("minspan")), key=f1.__getitem__)
        combined = max((s for s in f1 if s.startswith("combined")), key=f1.__getitem__)
        some, n = _recall(report, combined, ("some (<50%)",))
        both, n_both = _recall(report, combined, ("some (<50%)", "none"))
        checks.append(
            (name, lexical, f1[lexical], combined, f1[combined], some, n, both, n_both)
        )
    print()
    print(
        "| set | best min-span (pair best F1) | best combined (pair best F1) | ratio (target >= 1.4) | its recall of <50% pairs (n; target >= 0.30) | of <50% or none (n) |"
    )
    print("|---|---|---|---|---|---|")
    for name, lex, lf1, comb, cf1, some, n, both, n_both in checks:
        print(
            f"| {name} | {lex}: {lf1:.3f} | {comb}: {cf1:.3f} | {cf1 / lf1:.2f} "
            f"({'met' if cf1 >= RATIO * lf1 else 'missed'}) | {some:.3f} (n={n}; "
            f"{'met' if some >= PARAPHRASE_RECALL else 'missed'}) | {both:.3f} (n={n_both}) |"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else RESULTS)
