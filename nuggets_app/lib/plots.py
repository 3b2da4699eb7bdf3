"""The trust diagnostics' figures as PNG files (matplotlib, Agg backend), for
``manage.py diagnose`` to write beside its CSV tables for offline use.

The pages draw the same results as server-rendered SVG instead
(:mod:`nuggets_app.lib.charts`); matplotlib is imported only when a file is drawn.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Sequence
from typing import Any

RELEVANT, NONRELEVANT, OTHER = "#1f7a3d", "#b3261e", "#1f5fbf"


def _pyplot() -> Any:
    import matplotlib

    # Agg renders without a display (servers, CI).
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _finish(fig: Any) -> bytes:
    plt = _pyplot()
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=110)
    plt.close(fig)
    return out.getvalue()


def _finite(values: Sequence[float]) -> list[float]:
    return [v for v in values if not math.isnan(v)]


def bar_plot(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    ylabel: str,
    title: str,
) -> bytes:
    """Vertical bars, one per label (NaN drawn as 0)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4.0, 0.18 * len(labels) + 2), 3.5))
    heights = [0.0 if math.isnan(v) else v for v in values]
    ax.bar(range(len(labels)), heights, color=OTHER)
    ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=6)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    return _finish(fig)


def histogram_plot(
    relevant: Sequence[int],
    nonrelevant: Sequence[int],
    edges: Sequence[float],
    *,
    xlabel: str,
    title: str,
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
    return _finish(fig)


def length_bias_plot(series: dict[str, Sequence[Any]], *, title: str) -> bytes:
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
    return _finish(fig)


def _fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def _mean(values: Iterable[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return sum(defined) / len(defined) if defined else math.nan


# --- figures of the diagnostics results (duck-typed: no import of the services) ---
def matcher_map_figure(m: Any) -> bytes:
    """AP of the match scores per topic."""
    return bar_plot(
        list(m.per_topic),
        list(m.per_topic.values()),
        ylabel="AP",
        title=f"Matcher AP per topic (MAP {_fmt(m.mean)})",
    )


def histogram_figure(h: Any) -> bytes:
    """The per-topic score histograms summed over topics."""
    return histogram_plot(
        h.pooled_relevant,
        h.pooled_nonrelevant,
        [b / h.bins for b in range(h.bins + 1)],
        xlabel="score, min-max normalised per topic",
        title=f"All {len(h.topics)} topics: mean DO "
        f"{_fmt(_mean(t.do for t in h.topics))}, mean HSA "
        f"{_fmt(_mean(t.hsa for t in h.topics))}",
    )


def length_bias_figure(lb: Any) -> bytes:
    """Judged share, relevant share and P(rel | judged) per length bin."""
    series = {"human": lb.human}
    if lb.inferred is not None:
        series["inferred"] = lb.inferred
    return length_bias_plot(series, title="Length bias: equal-size length bins")
