"""Plots (matplotlib, Agg backend) and the Markdown text of a simulation report."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def _pyplot():
    import matplotlib

    # Agg renders to files without a display (servers, CI).
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(plt: Any, fig: Any, path: Path) -> Path:
    """Lay the figure out, write it as a 110 dpi PNG and free it."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _found_curve_plot(report: Mapping[str, Any], path: Path) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for name, curve in report["curves"].items():
        xs, ys = zip(*curve, strict=True) if curve else ((), ())
        ax.plot(xs, ys, label=name)
    points = report["threshold_curve"]
    ax.scatter(
        [p["non_relevant"] for p in points],
        [p["relevant"] for p in points],
        s=10,
        color="black",
        label="matcher thresholds 0..1 (step .05)",
    )
    ax.set_xlabel("non-relevant unjudged documents found")
    ax.set_ylabel("relevant unjudged documents found")
    ax.set_title("Relevant vs non-relevant found, going down each topic's ranking")
    ax.title.set_fontsize(9)
    ax.legend(fontsize=8)
    return _save(plt, fig, path)


def _systems_plot(report: Mapping[str, Any], path: Path) -> Path:
    plt = _pyplot()
    scores = report["systems"]["map"]
    full = scores["full"]
    runs = sorted(full)
    fig, ax = plt.subplots(figsize=(5.5, 4))
    labels = {
        "sample_only": "sample judgments alone",
        "sample_plus_inferred": "sample + inferred",
        "statap": "statMAP on the sample",
    }
    for key, label in labels.items():
        tau = report["tau"].get(key)
        tau_text = "nan" if tau is None or math.isnan(tau) else f"{tau:.3f}"
        ax.scatter(
            [full[r] for r in runs],
            [scores[key][r] for r in runs],
            s=14,
            label=f"{label} (tau {tau_text})",
        )
    ax.set_xlabel("MAP with the full qrels")
    ax.set_ylabel("MAP (or statMAP) with the reduced judgments")
    ax.legend(fontsize=8)
    return _save(plt, fig, path)


def _length_plot(report: Mapping[str, Any], path: Path) -> Path:
    plt = _pyplot()
    rows = report["length_bias"]["bins"]
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    xs = [r["bin"] for r in rows]
    width = 0.38
    human = [r["human_rate"] for r in rows]
    inferred = [r["inferred_rate"] for r in rows]
    ax.bar([x - width / 2 for x in xs], human, width, label="full qrels")
    ax.bar([x + width / 2 for x in xs], inferred, width, label="sample + inferred")
    ax.set_xticks(xs, [f"{r['words']} words" for r in rows])
    ax.tick_params(axis="x", labelsize=7)
    ax.set_xlabel("collection length bin")
    ax.set_ylabel("pooled pairs called relevant")
    ax.legend(fontsize=8)
    return _save(plt, fig, path)


def plots_write(report: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """The report's PNG plots in ``out_dir``."""
    return [
        _found_curve_plot(report, out_dir / "found_curve.png"),
        _systems_plot(report, out_dir / "system_ranking.png"),
        _length_plot(report, out_dir / "length_bias.png"),
    ]


def _f(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_f(v) for v in row) + " |" for row in rows]
    return lines


def _estimator_errors(estimators: Mapping[str, Any]) -> list[str]:
    """MAP estimators with an interval: their errors beside their interval widths, so
    an interval much wider (or narrower) than the errors shows."""
    rows = [
        [
            name,
            e.get("tau"),
            e.get("shift"),
            e.get("rmse"),
            e.get("half_width"),
            e.get("width_called_for"),
            e.get("coverage"),
        ]
        for name, e in sorted(estimators.items())
        if e.get("half_width") is not None
    ]
    if not rows:
        return []
    lines = ["", "## MAP estimators: errors beside interval widths", ""]
    lines += [
        "Errors against MAP under the full qrels restricted to the pooled documents "
        "(over the topics each estimate averages). *Shift*: the mean error over runs, "
        "the part every run shares; *width called for*: 1.5 x 1.96 x RMSE, which a "
        "mean half-width should not exceed; coverage: share of runs whose 95% "
        "interval holds the true value.",
        "",
    ]
    lines += _table(
        [
            "estimator",
            "Kendall tau",
            "shift",
            "RMSE",
            "mean half-width",
            "width called for",
            "coverage",
        ],
        rows,
    )
    return lines


def report_markdown(report: Mapping[str, Any], plots: Sequence[str]) -> str:
    """The report as Markdown: configuration, effort, inference, rankings, length bias."""
    effort, inference, config = report["effort"], report["inference"], report["config"]
    lines = [f"# Simulation report: {report['collection']}", ""]
    lines += _table(["parameter", "value"], sorted(config.items()))
    lines += ["", "## Effort", ""]
    lines += _table(["measure", "value"], list(effort.items()))
    lines += ["", "## Inference quality (full qrels as truth)", ""]
    lines += _table(
        ["measure", "value"],
        [
            ["matcher MAP over the pool", report["matcher_map"]],
            [
                "baseline MAP (BM25 + relevance feedback from the sample)",
                report["baseline_map"],
            ],
            [
                "matcher MAP, judged documents placed by their labels",
                report["matcher_map_with_judgments"],
            ],
            [
                "baseline MAP, judged documents placed by their labels",
                report["baseline_map_with_judgments"],
            ],
            *[[k, v] for k, v in inference.items()],
            [
                "inference MAP over the unjudged pool documents",
                report.get("map_unjudged"),
            ],
            [
                "baseline MAP over the unjudged pool documents",
                report.get("baseline_map_unjudged"),
            ],
            ["sum of p over the unjudged", report.get("expected_relevant")],
            ["relevant among the unjudged", report.get("true_relevant_unjudged")],
        ],
    )
    if report.get("calibration"):
        lines += ["", "Calibration of the unjudged pool documents:", ""]
        lines += _table(
            ["p from", "p to", "documents", "mean p", "share relevant"],
            [
                [b["bin_low"], b["bin_high"], b["n"], b["mean_p"], b["observed"]]
                for b in report["calibration"]
            ],
        )
    lines += ["", "## System rankings", ""]
    tau, tau_ap = report["tau"], report["tau_ap"]
    lines += _table(
        ["judgments", "Kendall tau vs full qrels", "tau_AP (symmetric)"],
        [[k, tau[k], tau_ap.get(k)] for k in tau],
    )
    scores = report["systems"]["map"]
    runs = sorted(scores["full"], key=lambda r: -scores["full"][r])
    lines += ["", f"Per run ({len(runs)} runs):", ""]
    lines += _table(
        ["run", "MAP full", "MAP sample", "MAP sample+inferred", "statMAP", "mean EAP"],
        [
            [
                r,
                scores["full"][r],
                scores["sample_only"][r],
                scores["sample_plus_inferred"][r],
                scores["statap"][r],
                scores.get("eap", {}).get(r),
            ]
            for r in runs
        ],
    )
    lines += _estimator_errors(report.get("estimators", {}))
    bias = report["length_bias"]
    lines += ["", "## Length bias (document length in words)", ""]
    lines += _table(["sample", "mean words"], list(bias["mean_words"].items()))
    ratio = _f(bias["inferred_over_human_mean_length"])
    lines += ["", f"Mean length, inferred relevant / relevant: {ratio}", ""]
    lines += _table(
        ["length bin", "words", "relevant (full)", "relevant (sample+inferred)"],
        [
            [b["bin"], b["words"], b["human_rate"], b["inferred_rate"]]
            for b in bias["bins"]
        ],
    )
    lines += [""]
    lines += _table(
        ["Mann-Whitney U", "n", "n", "median", "median", "p"],
        [
            [
                f"{t['first']} vs {t['second']}",
                t["n_first"],
                t["n_second"],
                t["median_first"],
                t["median_second"],
                t["p_value"],
            ]
            for t in bias["tests"]
        ],
    )
    lines += ["", "## Plots", ""] + [f"![{name}]({name})" for name in plots]
    lines += [
        "",
        "Timings (seconds): "
        + ", ".join(f"{k} {v}" for k, v in report["timings"].items()),
        "",
    ]
    return "\n".join(lines)
