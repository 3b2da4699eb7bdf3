"""Tables of docs/results/reusability.md from the reports run.sh copied to
var/results/reusability.

Usage (from the repository root): python lab/studies/reusability/summarize.py [DIR]
(DIR: the folder holding <collection>/<mode>-seed<S>.json, default var/results/reusability).
Prints Markdown: per collection and mode, every estimator's summary as mean ± sd over
the seeds (largest rank drop: the largest over the seeds), then per held-out run of
DL19 the rank errors of sample_only, bpref and the default estimator per seed.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[3] / "var/results/reusability"
ORDER = ("sample_only", "statap", "bpref", "condensed_ap", "eap", "model_assisted")


def _reports(base: Path) -> dict[tuple[str, str], list[dict]]:
    found: dict[tuple[str, str], list[dict]] = {}
    for path in sorted(base.glob("*/*-seed*.json")):
        report = json.loads(path.read_text())
        found.setdefault((path.parent.name, report["mode"]), []).append(report)
    return found


def _ms(values: list[float]) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.fmean(values):.3f} ± {statistics.stdev(values):.3f}"


def summary(reports: list[dict]) -> list[str]:
    default = reports[0]["default_estimator"]
    names = [e for e in ORDER if e != "model_assisted"] + [default]
    seeds = ", ".join(str(r["config"]["seed"]) for r in reports)
    lines = [
        f"seeds {seeds}; {reports[0]['runs'] and len(reports[0]['runs'])} held-out runs "
        f"in {len(reports[0]['groups'])} groups",
        "",
        "| estimator | mean abs rank error | largest rank drop | mean rel error | tau |",
        "|---|---|---|---|---|",
    ]
    for name in names:
        rows = [r["reusability"][name] for r in reports]
        label = f"**{name}** (default)" if name == default else name
        lines.append(
            f"| {label} | {_ms([x['mean_abs_rank_error'] for x in rows])} | "
            f"{max(x['max_rank_drop'] for x in rows):.0f} | "
            f"{_ms([x['mean_rel_error'] for x in rows])} | "
            f"{_ms([x['tau'] for x in rows])} |"
        )
    return lines


def per_run(reports: list[dict]) -> list[str]:
    default = reports[0]["default_estimator"]
    lines = [
        "| run | group | full MAP | full rank | rank error: sample_only | bpref | "
        f"{default} |",
        "|---|---|---|---|---|---|---|",
    ]
    rows = {r["run"]: r for r in reports[0]["runs"]}
    by_seed = [{r["run"]: r for r in rep["runs"]} for rep in reports]
    for name in sorted(rows, key=lambda n: rows[n]["full"]["rank"]):
        row = rows[name]
        cells = [
            "/".join(f"{s[name][e]['rank_error']:+d}" for s in by_seed)
            for e in ("sample_only", "bpref", default)
        ]
        lines.append(
            f"| {name} | {row['group']} | {row['full']['map']:.4f} | "
            f"{row['full']['rank']} | {' | '.join(cells)} |"
        )
    return lines


def per_seed(reports: list[dict]) -> list[str]:
    """Per seed: the default estimator's mean absolute rank error beside sample-only's
    (and their ratio) and bpref's, and its largest rank drop; then, over every seed,
    how many held-out runs each estimator drops and raises."""
    default = reports[0]["default_estimator"]
    lines = [
        f"| seed | mean abs rank error: {default} | sample_only | ratio | bpref | "
        f"largest rank drop: {default} |",
        "|---|---|---|---|---|---|",
    ]
    for report in reports:
        r = report["reusability"]
        mine, base = (
            r[default]["mean_abs_rank_error"],
            r["sample_only"]["mean_abs_rank_error"],
        )
        lines.append(
            f"| {report['config']['seed']} | {mine:.3f} | {base:.3f} | "
            f"{mine / base:.2f} | {r['bpref']['mean_abs_rank_error']:.3f} | "
            f"{r[default]['max_rank_drop']:.0f} |"
        )
    lines += [
        "",
        "| estimator | held-out runs dropped | raised | kept |",
        "|---|---|---|---|",
    ]
    names = [e for e in ORDER if e != "model_assisted"] + [default]
    for name in names:
        errors = [row[name]["rank_error"] for rep in reports for row in rep["runs"]]
        lines.append(
            f"| {name} | {sum(e > 0 for e in errors)} | {sum(e < 0 for e in errors)} | "
            f"{sum(e == 0 for e in errors)} |"
        )
    return lines


def calibration(reports: list[dict]) -> list[str]:
    """Per seed, over the held-out groups: unpooled documents scored, their summed
    cross-fit p and their true relevant count (reports that record them)."""
    lines = [
        "| seed | unpooled documents scored | expected relevant (Σ p) | truly relevant |",
        "|---|---|---|---|",
    ]
    for report in reports:
        groups = report.get("unpooled")
        if not groups:
            continue
        total = {
            k: sum(g[k] for g in groups.values()) for k in next(iter(groups.values()))
        }
        lines.append(
            f"| {report['config']['seed']} | {total['documents']:.0f} | "
            f"{total['expected_relevant']:.1f} | {total['true_relevant']:.0f} |"
        )
    return lines if len(lines) > 2 else []


def main() -> int:
    found = _reports(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
    if not found:
        print(
            "no reports in var/results/reusability: run run.sh first", file=sys.stderr
        )
        return 1
    for (collection, mode), reports in sorted(found.items()):
        print(f"### {collection}, {mode}\n")
        print("\n".join(summary(reports)) + "\n")
        print("\n".join(per_seed(reports)) + "\n")
        table = calibration(reports)
        if table:
            print("\n".join(table) + "\n")
    for (collection, mode), reports in sorted(found.items()):
        if collection == "dl19":
            print(f"### {collection}, {mode}: per held-out run (seeds in order)\n")
            print("\n".join(per_run(reports)) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
