"""One table over the four evaluate_matcher reports (TS 2013/2014, sentence/document).

Usage: python lab/studies/human_nuggets/summarize.py var/results/human-nuggets
"""

import json
import sys
from pathlib import Path

RUNS = ("ts13-sentence", "ts13-document", "ts14-sentence", "ts14-document")
SCORINGS = ("minspan k=3 lam=0.5", "minspan k=2 lam=0.8", "nugget-bm25 (normalised)")


def _f(value):
    return "n/a" if value is None else f"{value:.3f}"


def main(folder: Path) -> None:
    reports = {
        run: json.loads((folder / run / "report.json").read_text()) for run in RUNS
    }
    print(
        "| set | units | nuggets | gold pairs | scoring | pair AP | pair best F1 (t; P, R) | unit AP | unit best F1 (t; P, R) |"
    )
    print("|---" * 9 + "|")
    for run, report in reports.items():
        for name in SCORINGS:
            pair = report["scorings"][name]["pair"]
            unit = report["scorings"][name]["unit"]
            print(
                f"| {run} | {report['units']} | {report['nuggets']} | {report['gold']} | "
                f"{name} | {_f(pair['average_precision'])} | {_f(pair['best_f1'])} "
                f"({_f(pair['best_threshold'])}; {_f(pair['best_precision'])}, "
                f"{_f(pair['best_recall'])}) | {_f(unit['average_precision'])} | "
                f"{_f(unit['best_f1'])} ({_f(unit['best_threshold'])}; "
                f"{_f(unit['best_precision'])}, {_f(unit['best_recall'])}) |"
            )
    print("\nPer importance grade, minspan k=3 lam=0.5, pair AP / best F1:\n")
    print("| set | grade 1 | grade 2 | grade 3 |")
    print("|---|---|---|---|")
    for run, report in reports.items():
        grades = report["scorings"]["minspan k=3 lam=0.5"]["per_grade"]
        cells = [
            f"{_f(grades[g]['average_precision'])} / {_f(grades[g]['best_f1'])} (n={grades[g]['gold']})"
            if g in grades
            else "n/a"
            for g in ("1", "2", "3")
        ]
        print(f"| {run} | " + " | ".join(cells) + " |")
    print(
        "\nRecall of minspan k=3 lam=0.5 at its best-F1 threshold, by nugget length and by how much of the nugget the human span repeats:\n"
    )
    print(
        "| set | 1-3 terms | 4-6 | 7-10 | 11+ | span repeats >= 50% of the nugget's terms | < 50% | none |"
    )
    print("|---" * 8 + "|")
    for run, report in reports.items():
        fail = report["failures"]
        length = fail["recall_by_nugget_terms"]
        overlap = fail["recall_by_span_overlap"]
        cells = [_cell(length.get(k)) for k in ("1-3", "4-6", "7-10", "11+")]
        cells += [
            _cell(overlap.get(k)) for k in ("most (>=50%)", "some (<50%)", "none")
        ]
        print(f"| {run} | " + " | ".join(cells) + " |")


def _cell(value):
    if value is None:
        return "n/a"
    gold, _, recall = value
    return f"{recall:.3f} (n={gold})"


if __name__ == "__main__":
    main(Path(sys.argv[1]))
