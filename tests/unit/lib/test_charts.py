"""Chart geometry: labels that never overlap, round axes, and marks placed in
proportion to the values they stand for."""

import math

import pytest

from nuggets_app.lib.charts import (
    grouped_bars,
    intervals,
    nice_range,
    scatter,
    scatter_labels,
)


def test_points_on_top_of_each_other_get_one_label():
    xs = [0.30, 0.30, 0.301, 0.9]
    ys = [0.40, 0.40, 0.401, 0.1]
    chosen = scatter_labels(xs, ys, [5, 4, 3, 0])
    assert chosen == [0, 3]  # the biggest mover of the clump, and the lone point


def test_the_runs_that_move_most_are_labelled_first_up_to_the_limit():
    xs = [i / 20 for i in range(20)]
    ys = [(i * 7 % 20) / 20 for i in range(20)]
    moves = [abs(i - (i * 7 % 20)) for i in range(20)]
    chosen = scatter_labels(xs, ys, moves, limit=5)
    assert len(chosen) == 5
    assert min(moves[i] for i in chosen) >= sorted(moves, reverse=True)[4]
    for a in chosen:
        for b in chosen:
            if a < b:
                assert math.hypot(xs[a] - xs[b], ys[a] - ys[b]) >= 0.06 * 0.95


def test_axes_end_on_round_steps_that_cover_the_values():
    assert nice_range(0.0, 0.37) == (0.0, 0.4, [0.0, 0.1, 0.2, 0.3, 0.4])
    low, high, ticks = nice_range(-0.03, 0.81)
    assert low <= -0.03
    assert high >= 0.81
    assert ticks[0] == low
    assert ticks[-1] == high
    assert nice_range(0, 3, integer=True)[2] == [0, 1, 2, 3]


def test_nan_points_are_left_out_and_only_chosen_points_are_labelled():
    chart = scatter(
        id="s", names=["a", "b", "c"], xs=[0.1, math.nan, 0.8], ys=[0.2, 0.5, 0.7],
        xlabel="x", ylabel="y", title="t", desc="d", priority=[1, 9, 2],
    )  # fmt: skip
    assert [p["name"] for p in chart["points"]] == ["a", "c"]
    assert all(p["label"] for p in chart["points"])
    # One scale for both axes: the diagonal runs corner to corner of the square.
    d = chart["diagonal"]
    assert d["x2"] - d["x1"] == pytest.approx(d["y1"] - d["y2"])
    a, c = chart["points"]
    assert (c["cx"] - a["cx"]) / (c["cy"] - a["cy"]) == pytest.approx(-0.7 / 0.5, 0.02)


def test_no_label_covers_another_even_when_their_points_stand_apart():
    # Apart as points (scatter_labels keeps both) but side by side in one row.
    names = ["a-very-long-run-name-1", "a-very-long-run-name-2", "short"]
    xs, ys = [0.10, 0.16, 0.9], [0.50, 0.50, 0.1]
    assert scatter_labels(xs, ys, [2, 1, 0]) == [0, 1, 2]
    chart = scatter(id="s", names=names, xs=xs, ys=ys, xlabel="x", ylabel="y",
                    title="t", desc="d", priority=[2, 1, 0])  # fmt: skip
    labelled = [p["name"] for p in chart["points"] if p["label"]]
    assert labelled == ["a-very-long-run-name-1", "short"]


def test_interval_bars_are_where_their_values_are_on_the_shared_axis():
    rows = [("r1", 0.3, 0.2, 0.45, False), ("r2", 0.5, 0.35, 0.7, True),
            ("r3", math.nan, math.nan, math.nan, False)]  # fmt: skip
    chart = intervals(id="i", rows=rows, xlabel="m", title="t", desc="d")
    ticks = chart["axes"]["x_ticks"]
    (p0, v0), (p1, v1) = [(t["at"], float(t["label"])) for t in (ticks[0], ticks[-1])]

    def value(px: float) -> float:
        return v0 + (px - p0) * (v1 - v0) / (p1 - p0)

    for mark, (_, est, low, high, flagged) in zip(
        chart["rows"][:2], rows, strict=False
    ):
        assert value(mark["x0"]) == pytest.approx(low, abs=0.002)
        assert value(mark["cx"]) == pytest.approx(est, abs=0.002)
        assert value(mark["x1"]) == pytest.approx(high, abs=0.002)
        assert mark["flagged"] == flagged
    assert [m["defined"] for m in chart["rows"]] == [True, True, False]
    assert chart["rows"][2]["title"] == "r3: n/a"
    assert intervals(id="i", rows=[], xlabel="m", title="t", desc="d") is None
    nothing = intervals(id="i", rows=rows[2:], xlabel="m", title="t", desc="d")
    assert [m["title"] for m in nothing["rows"]] == ["r3: n/a"]


def test_grouped_bars_are_as_high_as_their_counts_side_by_side():
    chart = grouped_bars(
        id="g", edges=[0.0, 0.5, 1.0],
        series=[("rel", "#000", [4, 0]), ("non", "#111", [2, 8])],
        xlabel="x", ylabel="y", title="t", desc="d",
    )  # fmt: skip
    heights = {(b["series"], b["count"]): b["h"] for b in chart["bars"]}
    assert heights[("rel", 4)] == pytest.approx(2 * heights[("non", 2)], abs=0.2)
    assert heights[("non", 8)] == pytest.approx(2 * heights[("rel", 4)], abs=0.2)
    assert heights[("rel", 0)] == 0
    assert [e["label"] for e in chart["legend"]] == ["rel", "non"]
