"""Simulated vs human nuggets on the TS pseudo-collection: mean ± sd over seeds.

Usage: python lab/studies/ts/summarize.py var/results/ts/reports
"""

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROWS = (
    ("nuggets", lambda r: r["nuggets"], 0),
    ("matcher MAP over the pool", lambda r: r["matcher_map"], 3),
    ("BM25+RF MAP over the pool", lambda r: r["baseline_map"], 3),
    (
        "paper rule: unjudged inferred",
        lambda r: r["systems_graded"]["paper_rule_inferred"],
        0,
    ),
    ("model: unjudged inferred", lambda r: r["inferred_relevant"], 0),
    ("model: precision", lambda r: r["precision"], 3),
    ("model: recall", lambda r: r["recall"], 3),
    ("MAP over unjudged: model", lambda r: r["map_unjudged"], 3),
    ("MAP over unjudged: BM25+RF", lambda r: r["baseline_map_unjudged"], 3),
    ("tau MAP: sample alone", lambda r: r["tau"]["sample_only"], 3),
    ("tau MAP: statAP", lambda r: r["tau"]["statap"], 3),
    (
        "tau MAP: paper rule",
        lambda r: r["systems_graded"]["map_paper_rule"]["tau"]["paper_rule"],
        3,
    ),
    ("tau MAP: model rule", lambda r: r["tau"]["sample_plus_inferred"], 3),
    ("tau MAP: model expected AP", lambda r: r["tau"]["eap"], 3),
    (
        "tau nDCG@10: paper rule",
        lambda r: r["systems_graded"]["ndcg10"]["tau"]["paper_rule"],
        3,
    ),
    (
        "tau nDCG@10: model rule",
        lambda r: r["systems_graded"]["ndcg10"]["tau"]["sample_plus_inferred"],
        3,
    ),
)


def _stat(values, digits):
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.{digits}f} ± {sd:.{digits}f}"


def main(folder: Path) -> None:
    groups = defaultdict(list)
    for path in sorted(folder.glob("*/report.json")):
        report = json.loads(path.read_text())
        groups[report["config"]["nuggets"]].append(report)
    kinds = sorted(groups, reverse=True)
    print("| | " + " | ".join(f"{k} ({len(groups[k])} seeds)" for k in kinds) + " |")
    print("|---" * (1 + len(kinds)) + "|")
    for label, get, digits in ROWS:
        cells = [_stat([get(r) for r in groups[k]], digits) for k in kinds]
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
