"""The dashboard's figures: results of the evaluation services as chart geometry
(:mod:`nuggets_app.lib.charts`), and a chart as an SVG document.

A page draws a figure inline from the same dict its SVG download and
``compare_qrels``'s plot write, through the same template, so they never differ.
Results are duck-typed (no import of the services that make them).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.template.loader import render_to_string

from nuggets_app.lib import charts
from nuggets_app.lib.charts import Chart


def chart_svg(chart: Chart) -> str:
    """The chart as a standalone SVG document (an XML declaration, then the same
    ``<svg>`` element a page shows inline)."""
    return render_to_string(chart["template"], {"chart": chart, "standalone": True})


def _fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def _mean(values: Iterable[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return sum(defined) / len(defined) if defined else math.nan


def ranking_scatter(
    scores_a: Mapping[str, float],
    scores_b: Mapping[str, float],
    *,
    moved: Mapping[str, int],
    xlabel: str,
    ylabel: str,
    title: str,
) -> Chart:
    """Per-run scores under A (x) against B (y); the runs that move most labelled."""
    names = sorted(scores_a)
    return charts.scatter(
        id="scatter",
        names=names,
        xs=[scores_a[n] for n in names],
        ys=[scores_b[n] for n in names],
        xlabel=xlabel,
        ylabel=ylabel,
        title=title,
        desc=f"One point per run ({len(names)}), its score under A across and "
        "under B up; on the dashed diagonal both qrels give the same score. "
        "Labelled: up to 10 runs that move most between the rankings.",
        priority=[abs(moved.get(n, 0)) for n in names],
    )


def comparison_chart(c: Any) -> Chart:
    """A qrels comparison (``comparison.QrelsComparison``) as its scatter."""
    r = c.ranking
    return ranking_scatter(
        c.scores_a,
        c.scores_b,
        moved={m.run: m.delta for m in r.moves},
        xlabel=f"{c.measure} under qrels A",
        ylabel=f"{c.measure} under qrels B",
        title=f"Kendall tau {r.kendall_tau:.3f}, tau_AP {r.tau_ap:.3f} ({r.runs} runs)",
    )


def matcher_map_chart(m: Any) -> Chart:
    """AP of the match scores per topic (``diagnostics.MatcherMap``)."""
    return charts.bars(
        id="matcher_map",
        labels=list(m.per_topic),
        values=list(m.per_topic.values()),
        xlabel="topic",
        ylabel="AP",
        title=f"Matcher AP per topic (MAP {_fmt(m.mean)})",
        desc=f"One bar per topic ({len(m.per_topic)}): the average precision of the "
        "held-out judged documents ranked by match score.",
    )


def histogram_chart(h: Any, *, id: str = "histograms") -> Chart:
    """The per-topic score histograms summed (``diagnostics.HistogramAnalysis``)."""
    return charts.grouped_bars(
        id=id,
        edges=[b / h.bins for b in range(h.bins + 1)],
        series=[
            ("judged relevant", charts.RELEVANT, h.pooled_relevant),
            ("judged non-relevant", charts.NONRELEVANT, h.pooled_nonrelevant),
        ],
        xlabel="score, min-max normalised per topic",
        ylabel="documents",
        title=f"All {len(h.topics)} topics: mean DO {_fmt(_mean(t.do for t in h.topics))}"
        f", mean HSA {_fmt(_mean(t.hsa for t in h.topics))}",
        desc=f"Judged relevant and judged non-relevant documents per score bin "
        f"({h.bins} bins), summed over the topics.",
    )


def length_bias_chart(lb: Any) -> Chart:
    """Judged share, relevant share and P(rel | judged) per length bin
    (``diagnostics.LengthBias``), human and inferred qrels."""
    series: dict[str, Sequence[Any]] = {"human": lb.human}
    if lb.inferred is not None:
        series["inferred"] = lb.inferred
    attrs = ("judged_share", "relevant_share", "p_rel_given_judged")
    bins = len(lb.human)
    even = 1 / bins if bins else None
    colours = {"human": charts.BLUE, "inferred": charts.ORANGE}
    return charts.line_panels(
        id="length_bias",
        panels=[
            ("share of judged pairs", even),
            ("share of relevant pairs", even),
            ("P(relevant | judged)", None),
        ],
        xs=[b.index + 1 for b in lb.human],
        series=[
            (name, colours[name], [[getattr(b, a) for b in rows] for a in attrs])
            for name, rows in series.items()
        ],
        xlabel="length bin",
        title="Length bias: equal-size length bins, short (1) to long",
        desc="Three panels per length bin: the share of judged pairs, the share of "
        "relevant pairs and P(relevant | judged), one line per qrels; the dashed "
        "line is 1/bins, the share without bias.",
    )


def agreement_chart(report: Any) -> Chart | None:
    """Agreement per inferred label and overall with its Wilson interval
    (``verification.VerificationReport``); n/a where nothing is judged yet."""
    summary = [a for a in report.rows if a.group == "all"]
    return charts.intervals(
        id="agreement",
        rows=[
            (
                f"inferred {a.label}" if a.label != "all" else "overall",
                a.estimate,
                a.ci_low,
                a.ci_high,
                False,
            )
            for a in summary
        ],
        xlabel="agreement with the assessors",
        title=f"Verification sample {report.sample.name}: 95% Wilson intervals",
        desc="Per inferred label and overall, the share of judged drawn documents "
        "whose inferred label the assessors confirmed (dot) and its 95% interval (bar).",
    )


def model_assisted_chart(rows: Iterable[tuple[str, float, float, float, bool]]):
    """Model-assisted MAP of each run with its 95% interval, flagged runs marked."""
    return charts.intervals(
        id="interval-chart",
        rows=list(rows),
        xlabel="model-assisted MAP",
        title="Model-assisted MAP of each run (dot) with its 95% interval (bar); "
        "flagged runs in orange",
        desc="One row per run, in the order of the table below (n/a: no estimate); "
        "a flag marks a run the bias check flags.",
    )
