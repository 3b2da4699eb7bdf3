"""Server-rendered chart geometry for the relevance model (the templates draw it):
the reliability diagram, with axes, ticks and labels."""

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
