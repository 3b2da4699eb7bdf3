"""The job pages' charts (the score histogram of a topic, its relevant-found curve and
the relevance model's reliability diagram) as :mod:`nuggets_app.lib.charts` geometry,
with the rows of the table shown beside each."""

from __future__ import annotations

from typing import Any

from nuggets_app.lib import charts

SERIES = (
    ("relevant", "Judged relevant", charts.RELEVANT),
    ("nonrelevant", "Judged non-relevant", charts.NONRELEVANT),
    ("unjudged", "Unjudged", charts.MUTED),
)


def chart_reliability(reliability: dict[str, Any] | None) -> dict[str, Any] | None:
    """Observed rate of relevance (y) against the mean predicted p (x) per p bin, on
    the unit square, with the diagonal of perfect calibration; None without bins."""
    if not reliability or not reliability.get("n"):
        return None
    rows = [row for row in reliability["bins"] if row["n"]]
    line = charts.Line(
        "observed rate",
        charts.BLUE,
        xs=[row["mean_p"] for row in rows],
        ys=[row["rate"] for row in rows],
        radii=[3 + min(6, row["n"] ** 0.5) for row in rows],
        titles=[
            f"p {row['low']:.1f}-{row['high']:.1f}: {row['n']} documents, "
            f"mean p {row['mean_p']:.3f}, observed {row['rate']:.3f}"
            for row in rows
        ],
    )
    chart = charts.lines(
        id="reliability",
        series=[line],
        xlabel="Predicted p (mean of the bin)",
        ylabel="Observed rate of relevance",
        title="Reliability diagram: observed rate of relevance against predicted p, "
        f"per p bin, from cross-validation on {reliability['n']} judged documents",
        desc="One dot per p bin, its size growing with the bin's documents; the "
        "dashed diagonal is perfect calibration.",
        unit_square=True,
        legend=False,
        width=360,
    )
    return {
        **chart,
        "rows": rows,
        "n": reliability["n"],
        "brier": reliability.get("brier"),
        "ece": reliability.get("ece"),
    }


def chart_histogram(hist: dict) -> dict:
    """Grouped bars, one group per score bin, one bar per series."""
    counts, edges = hist["counts"], hist["edges"]
    chart = charts.grouped_bars(
        id="histogram",
        edges=edges,
        series=[(label, colour, counts[name]) for name, label, colour in SERIES],
        xlabel="Min-span score",
        ylabel="Documents",
        title="Scores of judged-relevant, judged-non-relevant and unjudged documents",
        desc=f"Documents per score bin ({len(edges) - 1} bins), one bar per group.",
        width=480,
    )
    rows = [
        {
            "low": edges[b],
            "high": edges[b + 1],
            "counts": [counts[name][b] for name, _, _ in SERIES],
        }
        for b in range(len(edges) - 1)
    ]
    return {**chart, "rows": rows, "series": [(n, label) for n, label, _ in SERIES]}


def chart_curve(curve: list[tuple[float, int, int]]) -> dict:
    """The relevant-found (y) against non-relevant-found (x) polyline from (0, 0)."""
    line = charts.Line(
        "relevant found",
        charts.BLUE,
        xs=[0, *(fp for _, _, fp in curve)],
        ys=[0, *(tp for _, tp, _ in curve)],
        radii=[0] * (len(curve) + 1),
    )
    chart = charts.lines(
        id="curve",
        series=[line],
        xlabel="Judged non-relevant found",
        ylabel="Judged relevant found",
        title="Judged relevant (up) against judged non-relevant (right) as the "
        "threshold falls",
        desc="A line from the origin: each step down the threshold adds the judged "
        "documents it accepts.",
        integer=True,
        legend=False,
        width=480,
    )
    return {**chart, "rows": curve}
