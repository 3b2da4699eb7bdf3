"""Summarise simulation reports into per-collection tables, a summary table and plots.

Usage: python lab/studies/summarize.py REPORTS_DIR OUT_DIR
Reads REPORTS_DIR/<collection>/size<P>-seed<S>/report.json; writes OUT_DIR/<collection>.md and
OUT_DIR/summary.md (the pages), and REPORTS_DIR/summary_*.png (plots of summary.md's tau and
unjudged-MAP columns, rebuilt, not committed).
"""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
from pathlib import Path

COLUMNS = [
    ("pool", lambda r: r["pool_size"]),
    ("judged", lambda r: r["judged"]),
    ("judged %", lambda r: 100 * r["judged"] / r["pool_size"]),
    ("nuggets", lambda r: r["nuggets"]),
    ("inferred", lambda r: r["inferred_relevant"]),
    ("precision", lambda r: r["precision"]),
    ("recall", lambda r: r["recall"]),
    ("matcher MAP", lambda r: r["matcher_map"]),
    ("baseline MAP", lambda r: r["baseline_map"]),
    ("tau sample", lambda r: r["tau"]["sample_only"]),
    ("tau sample+inferred", lambda r: r["tau"]["sample_plus_inferred"]),
    ("tau statAP", lambda r: r["tau"]["statap"]),
    ("tau EAP", lambda r: r["tau"].get("eap")),
    ("model MAP unjudged", lambda r: r.get("map_unjudged")),
    ("BM25+RF MAP unjudged", lambda r: r.get("baseline_map_unjudged")),
    ("sum p unjudged", lambda r: r.get("expected_relevant")),
    ("relevant unjudged", lambda r: r.get("true_relevant_unjudged")),
]


def _fmt(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float):
        # Counts (means over seeds) read better without decimals.
        return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3f}"
    return str(value)


def _mean(values: list) -> float | None:
    clean = [v for v in values if v is not None and not math.isnan(v)]
    return statistics.fmean(clean) if clean else None


def load(reports: Path) -> dict[str, dict[tuple[int, int], dict]]:
    found: dict[str, dict[tuple[int, int], dict]] = {}
    for path in sorted(reports.glob("*/size*-seed*/report.json")):
        match = re.fullmatch(r"size(\d+)-seed(\d+)", path.parent.name)
        if match:
            key = (int(match.group(1)), int(match.group(2)))
            found.setdefault(path.parent.parent.name, {})[key] = json.loads(
                path.read_text()
            )
    return found


def collection_table(name: str, runs: dict[tuple[int, int], dict]) -> str:
    lines = [
        f"# {name}",
        "",
        "| sample | seed | " + " | ".join(c for c, _ in COLUMNS) + " |",
    ]
    lines.append("|---|---|" + "---|" * len(COLUMNS))
    for (size, seed), report in sorted(runs.items()):
        values = [_fmt(get(report)) for _, get in COLUMNS]
        lines.append(f"| {size}% | {seed} | " + " | ".join(values) + " |")
    first = next(iter(sorted(runs.items())))[1]
    config = first["config"]
    lines += [
        "",
        f"Runs pooled: {first['systems']['runs']}; pool depth {config['depth']}; rule "
        f"`{config['rule']}`; nuggets per document {config['nuggets_per_doc']}, "
        f"at most {config['max_terms']} terms; k {config['k']}, lambda {config['lam']}.",
        "",
        "Full reports (tables and plots) per run, rebuilt (not committed) by "
        f"`sh lab/studies/run_all.sh {name}`: "
        f"`var/results/reports/{name}/size<P>-seed<S>/report.md` and `report.json`.",
        "",
    ]
    return "\n".join(lines)


def summary_rows(found) -> list[tuple[str, int, list]]:
    rows = []
    for name, runs in sorted(found.items()):
        for size in sorted({s for s, _ in runs}):
            reports = [r for (s, _), r in runs.items() if s == size]
            rows.append(
                (name, size, [_mean([get(r) for r in reports]) for _, get in COLUMNS])
            )
    return rows


def summary_table(rows) -> str:
    lines = [
        "| collection | sample | " + " | ".join(c for c, _ in COLUMNS) + " |",
        "|---|---|" + "---|" * len(COLUMNS),
    ]
    for name, size, values in rows:
        lines.append(
            f"| {name} | {size}% | " + " | ".join(_fmt(v) for v in values) + " |"
        )
    return "\n".join(lines) + "\n"


def _get(report: dict, key):
    if isinstance(key, tuple):
        return report[key[0]].get(key[1])
    return report.get(key)


def _sd(values: list[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else math.nan


def _paired_p(ours: list[float], theirs: list[float]) -> float:
    """Two-sided paired t-test p-value over seeds (NaN with < 2 pairs or no spread)."""
    from scipy import stats

    differences = [a - b for a, b in zip(ours, theirs, strict=True)]
    if len(ours) < 2 or max(differences) - min(differences) < 1e-12:
        return math.nan  # no spread: the t statistic is undefined
    return float(stats.ttest_rel(ours, theirs).pvalue)


def _pm(values: list[float]) -> str:
    sd = _sd(values)
    mean = statistics.fmean(values)
    return f"{mean:.3f}" if math.isnan(sd) else f"{mean:.3f} ± {sd:.3f}"


def model_table(found) -> str:
    """Mean ± sd over seeds of the model's figures, with paired tests, per collection
    and sample size (reports of the relevance model only)."""
    lines = [
        "| collection | sample | seeds | model MAP unjudged | BM25+RF | p | wins "
        "| sum p / relevant | tau EAP | tau statAP | p |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    overall: dict[int, dict[str, list[float]]] = {}
    for name, runs in sorted(found.items()):
        for size in sorted({s for s, _ in runs}):
            reports = [
                r
                for (s, _), r in sorted(runs.items())
                if s == size
                and r.get("map_unjudged") is not None
                and r["config"].get("inference") == "model"
            ]
            if not reports:
                continue
            ours = [r["map_unjudged"] for r in reports]
            base = [r["baseline_map_unjudged"] for r in reports]
            eap = [r["tau"]["eap"] for r in reports]
            stat = [r["tau"]["statap"] for r in reports]
            ratio = [
                r["expected_relevant"] / r["true_relevant_unjudged"]
                for r in reports
                if r["true_relevant_unjudged"]
            ]
            wins = sum(a >= b for a, b in zip(ours, base, strict=True))
            lines.append(
                f"| {name} | {size}% | {len(reports)} "
                f"| {_pm(ours)} "
                f"| {_pm(base)} "
                f"| {_fmt(_paired_p(ours, base))} | {wins}/{len(reports)} "
                f"| {statistics.fmean(ratio):.3f} "
                f"| {_pm(eap)} "
                f"| {_pm(stat)} "
                f"| {_fmt(_paired_p(eap, stat))} |"
            )
            agg = overall.setdefault(size, {})
            for key, values in (
                ("all_map", ours),
                ("all_base", base),
                ("all_eap", eap),
            ):
                agg.setdefault(key, []).extend(values)
            agg.setdefault("all_statap", []).extend(stat)
            for key, values in (
                ("map", ours),
                ("base", base),
                ("eap", eap),
                ("statap", stat),
            ):
                agg.setdefault(key, []).append(statistics.fmean(values))
                agg.setdefault(key + "_sd", []).append(_sd(values))
    lines += [
        "",
        "Averaged over collections (mean of the per-collection means; sd = mean of the "
        "per-collection sd over seeds; p: paired t-test over every collection and seed):",
        "",
        "| sample | collections | model MAP unjudged | BM25+RF | p (all runs) "
        "| tau EAP (sd) | tau statAP (sd) | p (all runs) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size, agg in sorted(overall.items()):
        lines.append(
            f"| {size}% | {len(agg['map'])} | {statistics.fmean(agg['map']):.3f} "
            f"| {statistics.fmean(agg['base']):.3f} "
            f"| {_fmt(_paired_p(agg['all_map'], agg['all_base']))} "
            f"| {statistics.fmean(agg['eap']):.3f} ({_mean(agg['eap_sd']) or 0:.3f}) "
            f"| {statistics.fmean(agg['statap']):.3f} "
            f"({_mean(agg['statap_sd']) or 0:.3f}) "
            f"| {_fmt(_paired_p(agg['all_eap'], agg['all_statap']))} |"
        )
    return "\n".join(lines) + "\n"


def calibration_table(found, size: int = 10) -> str:
    """The calibration bins of every model run at ``size``% pooled: unjudged documents
    per probability bin, their mean probability and the share truly relevant."""
    bins: dict[float, list[tuple[int, float, float]]] = {}
    for runs in found.values():
        for (s, _), report in runs.items():
            if s != size or report["config"].get("inference") != "model":
                continue
            for b in report.get("calibration") or []:
                if b["n"]:
                    bins.setdefault(b["bin_low"], []).append(
                        (b["n"], b["mean_p"], b["observed"])
                    )
    lines = [
        "| p bin | unjudged documents | mean p | share relevant |",
        "|---|---|---|---|",
    ]
    for low, parts in sorted(bins.items()):
        n = sum(k for k, _, _ in parts)
        mean_p = sum(k * m for k, m, _ in parts) / n
        observed = sum(k * o for k, _, o in parts) / n
        lines.append(
            f"| {low:.1f}-{low + 0.1:.1f} | {n} | {mean_p:.3f} | {observed:.3f} |"
        )
    return "\n".join(lines) + "\n"


def plots(rows, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted({r[0] for r in rows})
    index = {c: i for i, (c, _) in enumerate(COLUMNS)}
    for filename, keys, ylabel in [
        (
            "summary_tau.png",
            ["tau sample", "tau sample+inferred", "tau statAP", "tau EAP"],
            "Kendall tau",
        ),
        (
            "summary_map.png",
            ["model MAP unjudged", "BM25+RF MAP unjudged"],
            "MAP over the unjudged pool",
        ),
    ]:
        fig, axes = plt.subplots(
            1, len(names), figsize=(2.2 * len(names), 3), sharey=True
        )
        for ax, name in zip(axes if len(names) > 1 else [axes], names, strict=True):
            mine = [r for r in rows if r[0] == name]
            for key in keys:
                points = [
                    (r[1], r[2][index[key]])
                    for r in mine
                    if r[2][index[key]] is not None
                ]
                ax.plot(
                    [x for x, _ in points],
                    [y for _, y in points],
                    marker="o",
                    label=key,
                )
            ax.set_title(name, fontsize=8)
            ax.set_xlabel("sample % of pool", fontsize=7)
            ax.tick_params(labelsize=7)
        (axes[0] if len(names) > 1 else axes).set_ylabel(ylabel, fontsize=8)
        (axes[-1] if len(names) > 1 else axes).legend(fontsize=6)
        fig.tight_layout()
        fig.savefig(out / filename, dpi=100)
        plt.close(fig)


def main() -> None:
    reports, out = Path(sys.argv[1]), Path(sys.argv[2])
    found = load(reports)
    for name, runs in found.items():
        (out / f"{name}.md").write_text(collection_table(name, runs))
    rows = summary_rows(found)
    (out / "summary.md").write_text(
        "# Summary (mean over seeds)\n\n"
        "Rebuilt from the reports of `sh lab/studies/run_all.sh` by "
        "`python lab/studies/summarize.py var/results/reports docs/results`.\n\n"
        + summary_table(rows)
        + "\n## Relevance model: mean ± sd over seeds, paired t-tests over seeds\n\n"
        + model_table(found)
        + "\nCalibration, every model run at 10% pooled (unjudged pooled documents):\n\n"
        + calibration_table(found)
    )
    plots(rows, reports)


if __name__ == "__main__":
    main()
