"""Table of docs/results/fitted_rule.md: hand-picked vs fitted decision rules.

Usage: python lab/studies/summarize_fitted.py REPORTS_DIR [WORK_DIR] > OUT.md
Reads REPORTS_DIR/<collection>/size10-seed1-<rule>/report.json (as written by
run_fitted.sh) and, when WORK_DIR is given, the fitted thresholds that
``manage.py simulate`` logged (``rule fit:...: score >= X``) in
WORK_DIR/<collection>/simulate.log.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

RULES = ("threshold-0.5", "fit-f1", "fit-f1-per-topic")
HEADER = (
    "| collection | rule | threshold | inferred | precision | recall | F1 "
    "| tau sample | tau sample+inferred | tau statAP |"
)


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _thresholds(log: Path) -> dict[str, str]:
    """The last logged threshold (and per-topic count) of each fitted rule."""
    found: dict[str, str] = {}
    if log.exists():
        for line in log.read_text(errors="replace").splitlines():
            m = re.match(
                r"rule (fit:\S+): score >= (\S+?)(, (\d+) per-topic)? \{", line
            )
            if m:
                extra = f" ({m.group(4)} per-topic)" if m.group(4) else ""
                found[m.group(1).replace(":", "-")] = f"{float(m.group(2)):.3g}{extra}"
    return found


def main(reports: Path, work: Path | None) -> str:
    lines = [HEADER, "|" + "---|" * 10]
    for collection in sorted(p.name for p in reports.iterdir() if p.is_dir()):
        logged = _thresholds(work / collection / "simulate.log") if work else {}
        for rule in RULES:
            path = reports / collection / f"size10-seed1-{rule}" / "report.json"
            if not path.exists():
                continue
            r = json.loads(path.read_text())
            threshold = "0.5" if rule == "threshold-0.5" else logged.get(rule, "?")
            tau = r["tau"]
            cells = [
                collection,
                rule.replace("-0.5", ":0.5").replace("fit-f1", "fit:f1"),
                threshold,
                r["inferred_relevant"],
                _fmt(r["precision"]),
                _fmt(r["recall"]),
                _fmt(r["inference"]["f1"]),
                _fmt(tau["sample_only"]),
                _fmt(tau["sample_plus_inferred"]),
                _fmt(tau["statap"]),
            ]
            lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    work_dir = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    sys.stdout.write(main(Path(sys.argv[1]), work_dir))
