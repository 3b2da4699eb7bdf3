"""Summarise simulation reports into per-collection tables, a summary table and plots.

Usage: python docs/results/summarize.py REPORTS_DIR OUT_DIR
Reads REPORTS_DIR/<collection>/size<P>-seed<S>/report.json; writes OUT_DIR/<collection>.md,
OUT_DIR/summary.md and OUT_DIR/summary_*.png.
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
        "Full reports (tables and plots) per run: "
        + ", ".join(
            f"[{s}% seed {d}](reports/{name}/size{s}-seed{d}/report.md)"
            for s, d in sorted(runs)
        ),
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


def plots(rows, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = sorted({r[0] for r in rows})
    index = {c: i for i, (c, _) in enumerate(COLUMNS)}
    for filename, keys, ylabel in [
        (
            "summary_tau.png",
            ["tau sample", "tau sample+inferred", "tau statAP"],
            "Kendall tau",
        ),
        ("summary_map.png", ["matcher MAP", "baseline MAP"], "MAP over the pool"),
    ]:
        fig, axes = plt.subplots(
            1, len(names), figsize=(2.2 * len(names), 3), sharey=True
        )
        for ax, name in zip(axes if len(names) > 1 else [axes], names, strict=True):
            mine = [r for r in rows if r[0] == name]
            for key in keys:
                ax.plot(
                    [r[1] for r in mine],
                    [r[2][index[key]] for r in mine],
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
        "# Summary (mean over seeds)\n\n" + summary_table(rows)
    )
    plots(rows, out)


if __name__ == "__main__":
    main()
