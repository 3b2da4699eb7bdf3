"""Server-rendered geometry of an interval chart (the template draws it): one row per
run, its estimate as a dot and its 95% interval as an error bar, on a shared axis."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

WIDTH, ROW = 720, 26
LEFT, RIGHT, TOP, BOTTOM = 200, 24, 10, 44
TICKS = 5


def _nice_top(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 x 10^k at or above ``value`` (0.1 at least)."""
    value = max(value, 0.1)
    power = 10 ** math.floor(math.log10(value))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= value - 1e-12)


def interval_chart(
    rows: Iterable[tuple[str, float, float, float, bool]],
) -> dict[str, Any] | None:
    """Rows of ``(run, estimate, ci_low, ci_high, flagged)`` as error bars, in the
    given order; None when no row has a finite estimate."""
    kept = [r for r in rows if all(math.isfinite(v) for v in r[1:4])]
    if not kept:
        return None
    top = _nice_top(max(r[3] for r in kept))
    low = min(0.0, min(r[2] for r in kept))
    inner = WIDTH - LEFT - RIGHT

    def x(value: float) -> float:
        return round(LEFT + inner * (value - low) / (top - low), 1)

    bars = []
    for i, (name, estimate, ci_low, ci_high, flagged) in enumerate(kept):
        y = TOP + ROW * i + ROW / 2
        bars.append({
            "name": name, "y": y, "label_y": y + 4, "cx": x(estimate),
            "x0": x(ci_low), "x1": x(ci_high), "cap0": y - 6, "cap1": y + 6,
            "flagged": flagged,
            "title": f"{name}: {estimate:.4f} (95% interval {ci_low:.4f} to "
                     f"{ci_high:.4f}){' · flagged' if flagged else ''}",
        })  # fmt: skip
    height = TOP + ROW * len(kept) + BOTTOM
    axis_y = height - BOTTOM + 6
    ticks = [low + (top - low) * k / TICKS for k in range(TICKS + 1)]
    return {
        "width": WIDTH,
        "height": height,
        "left": LEFT,
        "axis_y": axis_y,
        "x_end": WIDTH - RIGHT,
        "bars": bars,
        "ticks": [{"at": x(t), "label": f"{t:.2f}", "y": axis_y + 16} for t in ticks],
        "x_label": {"x": LEFT + inner / 2, "y": height - 6},
    }
