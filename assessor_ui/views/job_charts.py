"""Server-rendered chart geometry of the job pages (the templates draw it): the score
histogram of a topic, its relevant-found curve and the relevance model's reliability
diagram, with axes, ticks and labels."""

from __future__ import annotations

from typing import Any

WIDTH, HEIGHT = 360, 300
LEFT, RIGHT, TOP, BOTTOM = 52, 16, 14, 46
TICKS = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


def chart_reliability(reliability: dict[str, Any] | None) -> dict[str, Any] | None:
    """Observed rate of relevance (y) against the mean predicted p (x) per p bin, on
    the unit square, with the diagonal of perfect calibration; None without bins."""
    if not reliability or not reliability.get("n"):
        return None
    inner_w = WIDTH - LEFT - RIGHT
    inner_h = HEIGHT - TOP - BOTTOM

    def x(value: float) -> float:
        return round(LEFT + inner_w * value, 1)

    def y(value: float) -> float:
        return round(TOP + inner_h * (1 - value), 1)

    points = []
    for row in reliability["bins"]:
        if not row["n"]:
            continue
        points.append(
            {
                "cx": x(row["mean_p"]),
                "cy": y(row["rate"]),
                "r": 3 + min(6, row["n"] ** 0.5),
                "title": (
                    f"p {row['low']:.1f}-{row['high']:.1f}: {row['n']} documents, "
                    f"mean p {row['mean_p']:.3f}, observed {row['rate']:.3f}"
                ),
            }
        )
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "x0": LEFT,
        "x1": WIDTH - RIGHT,
        "y0": HEIGHT - BOTTOM,
        "y1": TOP,
        "polyline": " ".join(f"{p['cx']},{p['cy']}" for p in points),
        "points": points,
        "x_ticks": [
            {"at": x(t), "label": f"{t:.1f}", "y": HEIGHT - BOTTOM + 16} for t in TICKS
        ],
        "y_ticks": [{"at": y(t), "label": f"{t:.1f}", "x": LEFT - 8} for t in TICKS],
        "x_label": {"x": LEFT + inner_w / 2, "y": HEIGHT - 8},
        "y_label": {"x": 14, "y": TOP + inner_h / 2},
        "rows": [row for row in reliability["bins"] if row["n"]],
        "n": reliability["n"],
        "brier": reliability.get("brier"),
        "ece": reliability.get("ece"),
    }


CHART_W, CHART_H, PAD = 480, 200, 30
SERIES = (
    ("relevant", "Judged relevant"),
    ("nonrelevant", "Judged non-relevant"),
    ("unjudged", "Unjudged"),
)
# SVG presentation attributes, not inline CSS (the CSP allows no inline styles).
COLOURS = {"relevant": "#1f7a3d", "nonrelevant": "#b3261e", "unjudged": "#8a94a3"}


def chart_histogram(hist: dict) -> dict:
    """Grouped bars, one group per score bin, one bar per series."""
    counts = hist["counts"]
    bins = len(hist["edges"]) - 1
    top = max([1] + [c for row in counts.values() for c in row])
    group_w = (CHART_W - 2 * PAD) / bins
    bar_w = group_w / (len(SERIES) + 1)
    bars = []
    for b in range(bins):
        for i, (name, label) in enumerate(SERIES):
            count = counts[name][b]
            height = (CHART_H - 2 * PAD) * count / top
            bars.append(
                {
                    "x": round(PAD + b * group_w + (i + 0.5) * bar_w, 1),
                    "y": round(CHART_H - PAD - height, 1),
                    "w": round(bar_w, 1),
                    "h": round(height, 1),
                    "series": name,
                    "fill": COLOURS[name],
                    "title": f"{label}, {hist['edges'][b]:.1f}-{hist['edges'][b + 1]:.1f}: {count}",
                }
            )
    rows = [
        {
            "low": hist["edges"][b],
            "high": hist["edges"][b + 1],
            "counts": [counts[name][b] for name, _ in SERIES],
        }
        for b in range(bins)
    ]
    legend = [(label, COLOURS[name]) for name, label in SERIES]
    inner_h = CHART_H - 2 * PAD
    x_ticks = [
        {"at": round(PAD + b * group_w, 1), "label": f"{hist['edges'][b]:.1f}"}
        for b in range(0, bins + 1, max(1, bins // 5))
    ]
    y_ticks = [
        {"at": round(CHART_H - PAD - inner_h * v / top, 1), "label": str(v)}
        for v in sorted({0, top // 2, top})
    ]
    return {
        "bars": bars,
        "rows": rows,
        "width": CHART_W,
        "height": CHART_H,
        "top": top,
        "series": SERIES,
        "legend": legend,
        "axis_y": CHART_H - PAD,
        **_axes(x_ticks, y_ticks, "Min-span score", "Documents"),
    }


def _axes(x_ticks: list, y_ticks: list, x_label: str, y_label: str) -> dict:
    """Tick marks, tick labels and axis titles of a chart drawn in CHART_W x CHART_H
    with PAD on every side."""
    return {
        "pad": PAD,
        "x_ticks": [{**t, "y": CHART_H - PAD + 14} for t in x_ticks],
        "y_ticks": [{**t, "x": PAD - 6} for t in y_ticks],
        "x_label": {"x": CHART_W / 2, "y": CHART_H - 3, "text": x_label},
        "y_label": {"x": 9, "y": CHART_H / 2, "text": y_label},
    }


def chart_curve(curve: list[tuple[float, int, int]]) -> dict:
    """The relevant-found (y) against non-relevant-found (x) polyline from (0, 0)."""
    max_tp = max([1] + [tp for _, tp, _ in curve])
    max_fp = max([1] + [fp for _, _, fp in curve])
    inner_w, inner_h = CHART_W - 2 * PAD, CHART_H - 2 * PAD
    points = [(0, 0)] + [(fp, tp) for _, tp, fp in curve]
    svg = " ".join(
        f"{PAD + inner_w * fp / max_fp:.1f},{CHART_H - PAD - inner_h * tp / max_tp:.1f}"
        for fp, tp in points
    )
    x_ticks = [
        {"at": round(PAD + inner_w * v / max_fp, 1), "label": str(v)}
        for v in sorted({0, max_fp // 2, max_fp})
    ]
    y_ticks = [
        {"at": round(CHART_H - PAD - inner_h * v / max_tp, 1), "label": str(v)}
        for v in sorted({0, max_tp // 2, max_tp})
    ]
    return {
        "points": svg,
        "rows": curve,
        "max_tp": max_tp,
        "max_fp": max_fp,
        "width": CHART_W,
        "height": CHART_H,
        "axis_y": CHART_H - PAD,
        **_axes(x_ticks, y_ticks, "Judged non-relevant found", "Judged relevant found"),
    }
