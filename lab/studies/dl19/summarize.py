"""Tables of the DL19 runs: mean and sd over seeds per pool depth and sample size.

Usage: python lab/studies/dl19/summarize.py var/results/dl19/reports > table.md
"""

import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

AP_VARIANTS = (
    (
        "sample alone",
        lambda r: r["tau"]["sample_only"],
        lambda r: r["tau_ap"]["sample_only"],
    ),
    ("statAP", lambda r: r["tau"]["statap"], lambda r: r["tau_ap"]["statap"]),
    (
        "paper rule (score >= 0.5)",
        lambda r: r["systems_graded"]["map_paper_rule"]["tau"]["paper_rule"],
        lambda r: r["systems_graded"]["map_paper_rule"]["tau_ap"]["paper_rule"],
    ),
    (
        "model rule (p >= 0.5)",
        lambda r: r["tau"]["sample_plus_inferred"],
        lambda r: r["tau_ap"]["sample_plus_inferred"],
    ),
    ("model expected AP", lambda r: r["tau"]["eap"], lambda r: r["tau_ap"]["eap"]),
)
NDCG_VARIANTS = (
    ("sample alone", "sample_only"),
    ("paper rule (score >= 0.5)", "paper_rule"),
    ("model rule (p >= 0.5)", "sample_plus_inferred"),
    ("model expected nDCG@10", "endcg"),
)


def _stat(values, digits=3):
    values = [v for v in values if v is not None and not math.isnan(v)]
    if not values:
        return "n/a"
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.{digits}f} ± {sd:.{digits}f}"


def _count(values):
    return _stat(values, digits=0)


def main(folder: Path) -> None:
    groups = defaultdict(list)
    for path in sorted(folder.glob("*/report.json")):
        report = json.loads(path.read_text())
        config = report["config"]
        groups[(config["depth"], config["sample_fraction"])].append(report)
    keys = sorted(groups, key=lambda k: (k[0], k[1]))
    print(
        "### Kendall tau / tau_AP of the 37 runs' MAP (grade >= 2) against the full qrels\n"
    )
    print(
        "| depth | sample | seeds | " + " | ".join(n for n, _, _ in AP_VARIANTS) + " |"
    )
    print("|---" * (3 + len(AP_VARIANTS)) + "|")
    for key in keys:
        reports = groups[key]
        cells = [
            f"{_stat([tau(r) for r in reports])} / {_stat([ap(r) for r in reports])}"
            for _, tau, ap in AP_VARIANTS
        ]
        print(
            f"| {key[0]} | {key[1]:.0%} | {len(reports)} | " + " | ".join(cells) + " |"
        )
    print(
        "\n### Kendall tau / tau_AP of the runs' nDCG@10 (graded gains) against the full qrels\n"
    )
    print(
        "| depth | sample | seeds | " + " | ".join(n for n, _ in NDCG_VARIANTS) + " |"
    )
    print("|---" * (3 + len(NDCG_VARIANTS)) + "|")
    for key in keys:
        reports = groups[key]
        ndcg = [r["systems_graded"]["ndcg10"] for r in reports]
        cells = [
            f"{_stat([g['tau'].get(v, math.nan) for g in ndcg])} / "
            f"{_stat([g['tau_ap'].get(v, math.nan) for g in ndcg])}"
            for _, v in NDCG_VARIANTS
        ]
        print(
            f"| {key[0]} | {key[1]:.0%} | {len(reports)} | " + " | ".join(cells) + " |"
        )
    print(
        "\n### Effort, text coverage and inference quality on the unjudged pooled passages\n"
    )
    print(
        "| depth | sample | pooled | without text | judged | judged without text | "
        "nuggets | model: inferred / precision / recall | paper rule inferred | "
        "MAP unjudged: model / BM25+RF | expected / true relevant unjudged |"
    )
    print("|---" * 11 + "|")
    for key in keys:
        reports = groups[key]
        cov = [r["text_coverage"] for r in reports]
        print(
            f"| {key[0]} | {key[1]:.0%} | {_count([c['pooled'] for c in cov])} | "
            f"{_count([c['pooled_without_text'] for c in cov])} | "
            f"{_count([c['judged'] for c in cov])} | "
            f"{_count([c['judged_without_text'] for c in cov])} | "
            f"{_count([r['nuggets'] for r in reports])} | "
            f"{_count([r['inferred_relevant'] for r in reports])} / "
            f"{_stat([r['precision'] for r in reports])} / "
            f"{_stat([r['recall'] for r in reports])} | "
            f"{_count([r['systems_graded']['paper_rule_inferred'] for r in reports])} | "
            f"{_stat([r['map_unjudged'] for r in reports])} / "
            f"{_stat([r['baseline_map_unjudged'] for r in reports])} | "
            f"{_count([r['expected_relevant'] for r in reports])} / "
            f"{_count([r['true_relevant_unjudged'] for r in reports])} |"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
