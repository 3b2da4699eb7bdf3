"""Chart geometry for server-drawn SVG: plain data in, a dict of pixel positions out.

Every chart of the pages (and ``compare_qrels --plot``) is drawn by a template of
``nuggets_app/templates/nuggets_app/charts/`` from a dict built here: ``template``
(which one draws it), ``id`` (unique on its page, for ``aria-labelledby``), ``title``
and ``desc`` (the text alternative), ``width``/``height``, then the marks. No JavaScript and no CSS:
colours and sizes are SVG presentation attributes, which the site's content security
policy allows, so the same drawing serves inline in a page and as a file of its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Chart = dict[str, Any]
WIDTH = 720
MUTED = "#8a94a3"
BLUE, ORANGE = "#1f5fbf", "#ad4e00"
RELEVANT, NONRELEVANT = "#1f7a3d", "#b3261e"
TEMPLATES = "nuggets_app/charts/"


def _finite(values: Sequence[float]) -> list[float]:
    return [v for v in values if isinstance(v, int | float) and math.isfinite(v)]


def nice_range(
    low: float, high: float, *, count: int = 5, integer: bool = False
) -> tuple[float, float, list[float]]:
    """``[low, high]`` widened to round steps of 1, 2, 2.5 or 5 x 10^k, about
    ``count`` of them, and the ticks at those steps (whole steps when ``integer``)."""
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw - 1e-12)
    if integer:
        step = max(1.0, math.ceil(step))
    start = math.floor(low / step + 1e-9) * step
    stop = max(math.ceil(high / step - 1e-9) * step, start + step)
    ticks = [
        round(start + k * step, 10) for k in range(round((stop - start) / step) + 1)
    ]
    return start, stop, ticks


def tick_label(value: float) -> str:
    return f"{value:g}"


@dataclass(frozen=True)
class Frame:
    """A plot area: the data ranges mapped onto the pixel box ``left..right`` by
    ``top..bottom`` (y grows upwards)."""

    left: float
    right: float
    top: float
    bottom: float
    x_range: tuple[float, float]
    y_range: tuple[float, float]
    height: float  # of the whole chart: the x axis title sits at its foot

    def x(self, value: float) -> float:
        low, high = self.x_range
        return round(
            self.left + (self.right - self.left) * (value - low) / (high - low), 1
        )

    def y(self, value: float) -> float:
        low, high = self.y_range
        return round(
            self.bottom - (self.bottom - self.top) * (value - low) / (high - low), 1
        )

    def axes(
        self,
        *,
        x_ticks: Sequence[tuple[float, str]],
        y_ticks: Sequence[float],
        x_label: str,
        y_label: str,
        rotate: bool = False,
    ) -> dict[str, Any]:
        """Axis lines, tick marks with labels, grid lines and axis titles; ``x_ticks``
        are (value, label); ``rotate`` turns the x labels upright (many categories)."""
        y0 = self.bottom
        return {
            "x0": self.left,
            "x1": self.right,
            "y0": y0,
            "y1": self.top,
            "tick_y": y0 + 5,
            "rotate": rotate,
            "x_ticks": [
                {"at": self.x(v), "label": label, "y": y0 + (9 if rotate else 18)}
                for v, label in x_ticks
            ],
            "y_ticks": [
                {"at": self.y(v), "label": tick_label(v), "x": self.left - 8}
                for v in y_ticks
            ],
            "tick_x": self.left - 5,
            "x_label": {
                "x": round((self.left + self.right) / 2, 1),
                "y": self.height - 8,
                "text": x_label,
            },
            "y_label": {
                "x": round(self.left - 44, 1),
                "y": round((self.top + self.bottom) / 2, 1),
                "text": y_label,
            },
        }


def _chart(kind: str, id: str, title: str, desc: str, width: float, height: float):
    return {
        "template": f"{TEMPLATES}{kind}.svg",
        "id": id,
        "title": title,
        "desc": desc,
        "width": width,
        "height": height,
    }


def _legend(entries: Sequence[tuple[str, str]], right: float, y: float) -> list[dict]:
    """Legend rows (swatch and label) stacked at the top right of the plot area."""
    return [
        {
            "label": label,
            "colour": colour,
            "x": right - 150,
            "y": y + 16 * i,
            "text_x": right - 132,
            "text_y": y + 16 * i + 10,
        }
        for i, (label, colour) in enumerate(entries)
    ]


def scatter_labels(
    xs: Sequence[float],
    ys: Sequence[float],
    priority: Sequence[float],
    *,
    limit: int = 10,
    min_gap: float = 0.06,
) -> list[int]:
    """Which points get a label so that labels do not overlap: the highest
    ``priority`` first (ties by index), skipping a point closer than ``min_gap`` (as a
    fraction of the plotted range) to one already labelled, at most ``limit``."""

    def scaled(values: Sequence[float]) -> list[float]:
        finite = _finite(values)
        low, high = (min(finite), max(finite)) if finite else (0.0, 1.0)
        span = (high - low) or 1.0
        return [(v - low) / span for v in values]

    sx, sy = scaled(xs), scaled(ys)
    chosen: list[int] = []
    for i in sorted(range(len(xs)), key=lambda i: (-priority[i], i)):
        if len(chosen) >= limit:
            break
        if math.isnan(sx[i]) or math.isnan(sy[i]):
            continue
        if all(math.hypot(sx[i] - sx[j], sy[i] - sy[j]) >= min_gap for j in chosen):
            chosen.append(i)
    return sorted(chosen)


# A label's box in pixels: the pages draw labels at 13px, about 7.5px a character.
LABEL_CHARS, CHAR_W, LABEL_H = 24, 7.5, 14


def _point_label(name: str, cx: float, cy: float, frame: Frame) -> dict[str, Any]:
    """A label beside its point, to the left of it near the right edge (so it is not
    cut off), with the box its text covers (left, top, right, bottom)."""
    width = CHAR_W * min(len(name), LABEL_CHARS)
    top, bottom = cy - 5 - LABEL_H + 3, cy - 2  # the baseline is at cy - 5
    if cx + 6 + width <= frame.right + 16:
        x, anchor, box = cx + 6, "start", (cx + 6, top, cx + 6 + width, bottom)
    else:
        x, anchor, box = cx - 6, "end", (cx - 6 - width, top, cx - 6, bottom)
    return {"x": x, "y": cy - 5, "anchor": anchor, "box": box}


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _labels(
    names: Sequence[str],
    centres: dict[int, tuple[float, float]],
    xs: Sequence[float],
    ys: Sequence[float],
    priority: Sequence[float],
    frame: Frame,
    limit: int = 10,
) -> dict[int, dict[str, Any]]:
    """The labels of the points :func:`scatter_labels` would pick, highest priority
    first, skipping one whose text would cover a label already placed."""
    apart = scatter_labels(xs, ys, priority, limit=len(names))
    placed: dict[int, dict[str, Any]] = {}
    for i in sorted(apart, key=lambda i: (-priority[i], i)):
        if len(placed) >= limit:
            break
        label = _point_label(names[i], *centres[i], frame)
        if not any(_overlap(label["box"], other["box"]) for other in placed.values()):
            placed[i] = label
    return placed


def scatter(
    *,
    id: str,
    names: Sequence[str],
    xs: Sequence[float],
    ys: Sequence[float],
    xlabel: str,
    ylabel: str,
    title: str,
    desc: str,
    priority: Sequence[float] | None = None,
) -> Chart:
    """One point per name on one scale for both axes, with the diagonal y = x; a
    label on up to 10 of the points :func:`scatter_labels` picks (by ``priority``),
    skipping one whose text would cover a label already placed. A point with an
    undefined coordinate is left out (the table beside the chart has it)."""
    size = 560
    values = _finite([*xs, *ys])
    low, high, ticks = nice_range(min([0.0, *values]), max([1e-9, *values]))
    frame = Frame(72, size - 20, 36, size - 56, (low, high), (low, high), size)
    centres = {
        i: (frame.x(x), frame.y(y))
        for i, (x, y) in enumerate(zip(xs, ys, strict=True))
        if math.isfinite(x) and math.isfinite(y)
    }
    labels = _labels(names, centres, xs, ys, priority or [0.0] * len(names), frame)
    points = []
    for i, (name, x, y) in enumerate(zip(names, xs, ys, strict=True)):
        if i not in centres:
            continue
        cx, cy = centres[i]
        points.append(
            {
                "name": name,
                "cx": cx,
                "cy": cy,
                "value_x": x,
                "value_y": y,
                "title": f"{name}: {x:.4f} (x), {y:.4f} (y)",
                "label": labels.get(i),
            }
        )
    return {
        **_chart("scatter", id, title, desc, size, size),
        "points": points,
        "diagonal": {
            "x1": frame.x(low),
            "y1": frame.y(low),
            "x2": frame.x(high),
            "y2": frame.y(high),
        },
        "axes": frame.axes(
            x_ticks=[(t, tick_label(t)) for t in ticks],
            y_ticks=ticks,
            x_label=xlabel,
            y_label=ylabel,
        ),
    }


def bars(
    *,
    id: str,
    labels: Sequence[str],
    values: Sequence[float],
    xlabel: str,
    ylabel: str,
    title: str,
    desc: str,
) -> Chart:
    """One vertical bar per label, labels upright under them (every k-th one when
    there are more than 40); an undefined value gets no bar."""
    height, longest = 320, max([1, *(len(label) for label in labels)])
    bottom = height - 40 - 7 * min(longest, 12)
    _, top, ticks = nice_range(0.0, max([1e-9, *_finite(values)]))
    frame = Frame(
        72, WIDTH - 16, 16, bottom, (0, max(1, len(labels))), (0.0, top), height
    )
    slot = (frame.right - frame.left) / max(1, len(labels))
    every = math.ceil(len(labels) / 40) or 1
    marks = []
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        shown = math.isfinite(value)
        y = frame.y(value) if shown else bottom
        marks.append(
            {
                "name": label,
                "value": value,
                "x": round(frame.left + slot * (i + 0.15), 1),
                "w": round(slot * 0.7, 1),
                "y": y,
                "h": round(bottom - y, 1),
                "title": f"{label}: {value:.4f}" if shown else f"{label}: n/a",
            }
        )
    x_ticks = [
        (i + 0.5, label[:12]) for i, label in enumerate(labels) if i % every == 0
    ]
    return {
        **_chart("bars", id, title, desc, WIDTH, height),
        "bars": marks,
        "fill": BLUE,
        "axes": frame.axes(
            x_ticks=x_ticks, y_ticks=ticks, x_label=xlabel, y_label=ylabel, rotate=True
        ),
    }


def grouped_bars(
    *,
    id: str,
    edges: Sequence[float],
    series: Sequence[tuple[str, str, Sequence[int]]],
    xlabel: str,
    ylabel: str,
    title: str,
    desc: str,
    width: int = WIDTH,
) -> Chart:
    """Counts per bin (``edges`` has one more value than each series' counts), one bar
    per series of ``(label, colour, counts)`` side by side in each bin, with a legend."""
    height = 300
    bins = len(edges) - 1
    _, top, ticks = nice_range(
        0, max([1, *(c for _, _, counts in series for c in counts)]), integer=True
    )
    frame = Frame(
        72,
        width - 16,
        16 + 16 * len(series),
        height - 56,
        (edges[0], edges[-1] if edges[-1] > edges[0] else edges[0] + 1),
        (0.0, top),
        height,
    )
    bar_w = (frame.right - frame.left) / max(1, bins) / (len(series) + 1)
    marks = []
    for b in range(bins):
        for i, (label, colour, counts) in enumerate(series):
            y = frame.y(counts[b])
            marks.append(
                {
                    "x": round(frame.x(edges[b]) + (i + 0.5) * bar_w, 1),
                    "w": round(bar_w, 1),
                    "y": y,
                    "h": round(frame.bottom - y, 1),
                    "fill": colour,
                    "series": label,
                    "count": counts[b],
                    "title": f"{label}, {edges[b]:.3g} to {edges[b + 1]:.3g}: {counts[b]}",
                }
            )
    step = max(1, bins // 5)
    x_ticks = [(edges[b], f"{edges[b]:.3g}") for b in range(0, bins + 1, step)]
    return {
        **_chart("grouped_bars", id, title, desc, width, height),
        "bars": marks,
        "legend": _legend([(s[0], s[1]) for s in series], frame.right, 8),
        "axes": frame.axes(
            x_ticks=x_ticks, y_ticks=ticks, x_label=xlabel, y_label=ylabel
        ),
    }


@dataclass(frozen=True)
class Line:
    """One series of a line chart: its points, and optionally a marker radius (0: no
    marker) and a tooltip per point."""

    label: str
    colour: str
    xs: Sequence[float]
    ys: Sequence[float]
    radii: Sequence[float] | None = None
    titles: Sequence[str] | None = None


def _panel(
    frame: Frame,
    lines: Sequence[Line],
    *,
    x_ticks: Sequence[tuple[float, str]],
    y_ticks: Sequence[float],
    xlabel: str,
    ylabel: str,
    reference: float | None = None,
    diagonal: bool = False,
) -> dict[str, Any]:
    """One plot area's lines (points with undefined values left out), its optional
    dashed reference level and dashed diagonal y = x, and its axes."""
    drawn = []
    for line in lines:
        radii = line.radii or [3.5] * len(line.xs)
        titles = line.titles or [
            f"{line.label}, {xlabel} {x:g}: {y:.4f}"
            for x, y in zip(line.xs, line.ys, strict=True)
        ]
        points = [
            {"cx": frame.x(x), "cy": frame.y(y), "r": round(r, 1), "title": t}
            for x, y, r, t in zip(line.xs, line.ys, radii, titles, strict=True)
            if math.isfinite(x) and math.isfinite(y)
        ]
        drawn.append(
            {
                "label": line.label,
                "colour": line.colour,
                "points": [p for p in points if p["r"]],
                "polyline": " ".join(f"{p['cx']},{p['cy']}" for p in points),
            }
        )
    low, high = frame.x_range
    return {
        "lines": drawn,
        "reference": None if reference is None else frame.y(reference),
        "diagonal": {
            "x1": frame.x(low),
            "y1": frame.y(low),
            "x2": frame.x(high),
            "y2": frame.y(high),
        }
        if diagonal
        else None,
        "axes": frame.axes(
            x_ticks=x_ticks, y_ticks=y_ticks, x_label=xlabel, y_label=ylabel
        ),
    }


def lines(
    *,
    id: str,
    series: Sequence[Line],
    xlabel: str,
    ylabel: str,
    title: str,
    desc: str,
    unit_square: bool = False,
    integer: bool = False,
    legend: bool = True,
    width: int = WIDTH,
    height: int = 300,
) -> Chart:
    """Lines on one plot area: axes from 0 to round values past the data (whole
    numbers when ``integer``), or ``unit_square``: both axes 0 to 1 with the diagonal."""
    if unit_square:
        (x_low, x_high, x_ticks), y_axis = nice_range(0, 1), nice_range(0, 1)
    else:
        xs = _finite([x for line in series for x in line.xs])
        ys = _finite([y for line in series for y in line.ys])
        x_low, x_high, x_ticks = nice_range(0, max([1e-9, *xs]), integer=integer)
        y_axis = nice_range(0, max([1e-9, *ys]), integer=integer)
    top = 16 + (16 * len(series) if legend else 0)
    frame = Frame(
        72,
        width - 16,
        top,
        height - 56,
        (x_low, x_high),
        (y_axis[0], y_axis[1]),
        height,
    )
    panel = _panel(
        frame,
        series,
        x_ticks=[(t, tick_label(t)) for t in x_ticks],
        y_ticks=y_axis[2],
        xlabel=xlabel,
        ylabel=ylabel,
        diagonal=unit_square,
    )
    entries = [(line.label, line.colour) for line in series] if legend else []
    return {
        **_chart("lines", id, title, desc, width, height),
        "panels": [panel],
        "legend": _legend(entries, frame.right, 8),
    }


def line_panels(
    *,
    id: str,
    panels: Sequence[tuple[str, float | None]],
    xs: Sequence[float],
    series: Sequence[tuple[str, str, Sequence[Sequence[float]]]],
    xlabel: str,
    title: str,
    desc: str,
) -> Chart:
    """Small multiples side by side: panel ``k`` of ``panels`` = ``(y label,
    reference level or None)`` draws, for each series ``(label, colour, values)``,
    the line through ``values[k]`` over ``xs``, a dashed line at the reference level."""
    height, width = 300, WIDTH / max(1, len(panels))
    x_low, x_high = min([0.5, *xs]), max([1.5, *xs]) + 0.5
    drawn = []
    for k, (ylabel, reference) in enumerate(panels):
        values = _finite([v for _, _, rows in series for v in rows[k]])
        _, top, ticks = nice_range(0.0, max([1e-9, *values, reference or 0.0]), count=4)
        frame = Frame(
            k * width + 64,
            (k + 1) * width - 8,
            16 + 16 * len(series),
            height - 56,
            (x_low, x_high),
            (0.0, top),
            height,
        )
        drawn.append(
            _panel(
                frame,
                [Line(label, colour, xs, rows[k]) for label, colour, rows in series],
                x_ticks=[(x, f"{x:g}") for x in xs],
                y_ticks=ticks,
                xlabel=xlabel,
                ylabel=ylabel,
                reference=reference,
            )
        )
    return {
        **_chart("lines", id, title, desc, WIDTH, height),
        "panels": drawn,
        "legend": _legend([(s[0], s[1]) for s in series], WIDTH - 8, 8),
    }


def intervals(
    *,
    id: str,
    rows: Sequence[tuple[str, float, float, float, bool]],
    xlabel: str,
    title: str,
    desc: str,
) -> Chart | None:
    """Rows of ``(name, estimate, ci_low, ci_high, flagged)`` as error bars on one
    axis, first row on top, flagged ones in orange; a row without a finite estimate
    and interval keeps its line, marked n/a. None when there are no rows."""
    if not rows:
        return None
    kept = [r for r in rows if all(math.isfinite(v) for v in r[1:4])]
    row_h = 26
    low, top, ticks = nice_range(
        min([0.0, *(r[2] for r in kept)]), max([0.1, *(r[3] for r in kept)])
    )
    height = 10 + row_h * len(rows) + 50
    frame = Frame(200, WIDTH - 24, 10, height - 50, (low, top), (0.0, 1.0), height)
    marks = []
    for i, (name, estimate, ci_low, ci_high, flagged) in enumerate(rows):
        y = frame.top + row_h * i + row_h / 2
        mark = {
            "name": name,
            "y": y,
            "label_y": y + 4,
            "flagged": flagged,
            "defined": all(math.isfinite(v) for v in (estimate, ci_low, ci_high)),
            "title": f"{name}: n/a",
            "na_x": frame.left + 6,
        }
        if mark["defined"]:
            mark.update(
                {
                    "cx": frame.x(estimate),
                    "x0": frame.x(ci_low),
                    "x1": frame.x(ci_high),
                    "cap0": y - 6,
                    "cap1": y + 6,
                    "colour": ORANGE if flagged else BLUE,
                    "title": f"{name}: {estimate:.4f} (95% interval {ci_low:.4f} to "
                    f"{ci_high:.4f}){' · flagged' if flagged else ''}",
                }
            )
        marks.append(mark)
    return {
        **_chart("intervals", id, title, desc, WIDTH, height),
        "rows": marks,
        "label_x": frame.left - 8,
        "axes": frame.axes(
            x_ticks=[(t, tick_label(t)) for t in ticks],
            y_ticks=[],
            x_label=xlabel,
            y_label="",
        ),
    }
