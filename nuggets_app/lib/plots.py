"""Server-rendered plots (matplotlib, Agg backend) as SVG or PNG bytes.

Plain data in, file bytes out: the pages serve them as ``<img>`` sources and downloads,
``manage.py diagnose`` writes them to files. SVG output carries no date and a fixed
hash salt, so the same data gives the same bytes.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Sequence
from typing import Any

FORMATS = {"svg": "image/svg+xml", "png": "image/png"}
RELEVANT, NONRELEVANT, OTHER = "#1f7a3d", "#b3261e", "#1f5fbf"


def _pyplot() -> Any:
    import matplotlib

    # Agg renders without a display (web workers, CI).
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "nuggets"
    import matplotlib.pyplot as plt

    return plt


def _finish(fig: Any, fmt: str) -> bytes:
    if fmt not in FORMATS:
        raise ValueError(f"plot format must be svg or png, got {fmt!r}")
    plt = _pyplot()
    fig.tight_layout()
    out = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {}
    fig.savefig(out, format=fmt, dpi=110, metadata=metadata)
    plt.close(fig)
    return out.getvalue()


def _finite(values: Sequence[float]) -> list[float]:
    return [v for v in values if not math.isnan(v)]


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


def scatter_plot(
    names: Sequence[str],
    xs: Sequence[float],
    ys: Sequence[float],
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    fmt: str = "svg",
    priority: Sequence[float] | None = None,
) -> bytes:
    """One point per item, with the diagonal y = x; labels on the points that
    :func:`scatter_labels` picks (by ``priority``, default: all equal)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 6))
    ax.scatter(xs, ys, s=18, color=OTHER)
    weights = priority if priority is not None else [0.0] * len(names)
    for i in scatter_labels(xs, ys, weights):
        ax.annotate(
            names[i],
            (xs[i], ys[i]),
            fontsize=6,
            xytext=(3, 3),
            textcoords="offset points",
        )
    values = _finite([*xs, *ys])
    low = min([0.0, *values])
    high = max([1e-9, *values]) * 1.05
    ax.plot([low, high], [low, high], linewidth=0.8, color="grey")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    return _finish(fig, fmt)


def bar_plot(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    ylabel: str,
    title: str,
    fmt: str = "svg",
) -> bytes:
    """Vertical bars, one per label (NaN drawn as 0)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, 0.18 * len(labels) + 2), 3.5))
    heights = [0.0 if math.isnan(v) else v for v in values]
    ax.bar(range(len(labels)), heights, color=OTHER)
    ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=6)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    return _finish(fig, fmt)


def histogram_plot(
    relevant: Sequence[int],
    nonrelevant: Sequence[int],
    edges: Sequence[float],
    *,
    xlabel: str,
    title: str,
    fmt: str = "svg",
) -> bytes:
    """Side-by-side bars of judged relevant and judged non-relevant counts per bin."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    bins = len(relevant)
    width = (edges[-1] - edges[0]) / bins if bins and edges[-1] > edges[0] else 1.0
    lefts = [edges[0] + b * width for b in range(bins)]
    ax.bar(
        [x + 0.05 * width for x in lefts],
        relevant,
        width=0.45 * width,
        align="edge",
        color=RELEVANT,
        label="judged relevant",
    )
    ax.bar(
        [x + 0.5 * width for x in lefts],
        nonrelevant,
        width=0.45 * width,
        align="edge",
        color=NONRELEVANT,
        label="judged non-relevant",
    )
    ax.set_xlabel(xlabel)
    ax.set_ylabel("documents")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    return _finish(fig, fmt)


def length_bias_plot(
    series: dict[str, Sequence[Any]], *, title: str, fmt: str = "svg"
) -> bytes:
    """Three panels (judged share, relevant share, P(rel | judged)) per length bin,
    one line per named series of ``LengthBin`` rows, with the no-bias level 1/B."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.5))
    panels = (
        ("judged_share", "share of judged pairs"),
        ("relevant_share", "share of relevant pairs"),
        ("p_rel_given_judged", "P(relevant | judged)"),
    )
    colours = {"human": OTHER, "inferred": "#d9822b"}
    for ax, (attr, label) in zip(axes, panels, strict=True):
        for name, rows in series.items():
            xs = [b.index + 1 for b in rows]
            ys = [getattr(b, attr) for b in rows]
            ax.plot(xs, ys, marker="o", label=name, color=colours.get(name, "grey"))
        some = next(iter(series.values()), [])
        if attr != "p_rel_given_judged" and some:
            ax.axhline(1 / len(some), linewidth=0.8, color="grey", linestyle="--")
        ax.set_xlabel("length bin (short to long)")
        ax.set_title(label, fontsize=9)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    return _finish(fig, fmt)


def interval_plot(
    labels: Sequence[str],
    points: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    *,
    xlabel: str,
    title: str,
    fmt: str = "svg",
) -> bytes:
    """Horizontal point estimates with their confidence intervals, first label on top."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 0.35 * len(labels) + 1.5))
    ys = list(range(len(labels)))[::-1]
    for y, p, lo, hi in zip(ys, points, lows, highs, strict=True):
        if not math.isnan(p):
            ax.plot([lo, hi], [y, y], color=OTHER, linewidth=2)
            ax.plot([p], [y], marker="o", color="black")
    ax.set_yticks(ys, labels, fontsize=7)
    ax.set_xlim(0, 1)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=9)
    return _finish(fig, fmt)


def _fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def _mean(values: Iterable[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return sum(defined) / len(defined) if defined else math.nan


# --- figures of the diagnostics results (duck-typed: no import of the services) ---
def comparison_figure(c: Any, fmt: str) -> bytes:
    """Per-run scores under A (x) against B (y)."""
    names = sorted(c.scores_a)
    r = c.ranking
    moved = {m.run: abs(m.delta) for m in r.moves}
    return scatter_plot(
        names,
        [c.scores_a[n] for n in names],
        [c.scores_b[n] for n in names],
        xlabel=f"{c.measure} under qrels A",
        ylabel=f"{c.measure} under qrels B",
        title=f"Kendall tau {r.kendall_tau:.3f}, tau_AP {r.tau_ap:.3f} ({r.runs} runs)",
        fmt=fmt,
        priority=[moved.get(n, 0) for n in names],
    )


def matcher_map_figure(m: Any, fmt: str) -> bytes:
    """AP of the match scores per topic."""
    return bar_plot(
        list(m.per_topic),
        list(m.per_topic.values()),
        ylabel="AP",
        title=f"Matcher AP per topic (MAP {_fmt(m.mean)})",
        fmt=fmt,
    )


def histogram_figure(h: Any, qid: str | None, fmt: str) -> bytes:
    """One topic's score histograms, or (``qid`` None) the per-topic ones summed."""
    if qid is None:
        edges = [b / h.bins for b in range(h.bins + 1)]
        return histogram_plot(
            h.pooled_relevant,
            h.pooled_nonrelevant,
            edges,
            xlabel="score, min-max normalised per topic",
            title=f"All {len(h.topics)} topics: mean DO "
            f"{_fmt(_mean(t.do for t in h.topics))}, mean HSA "
            f"{_fmt(_mean(t.hsa for t in h.topics))}",
            fmt=fmt,
        )
    topic = next((t for t in h.topics if t.qid == qid), None)
    if topic is None:
        raise KeyError(qid)
    return histogram_plot(
        topic.hist.relevant,
        topic.hist.nonrelevant,
        topic.hist.edges,
        xlabel="score",
        title=f"Topic {qid}: DO {_fmt(topic.do)}, HSA {_fmt(topic.hsa)}",
        fmt=fmt,
    )


def length_bias_figure(lb: Any, fmt: str) -> bytes:
    """Judged share, relevant share and P(rel | judged) per length bin."""
    series = {"human": lb.human}
    if lb.inferred is not None:
        series["inferred"] = lb.inferred
    return length_bias_plot(
        series, title="Length bias: equal-size length bins", fmt=fmt
    )
