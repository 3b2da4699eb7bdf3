"""Scatter labels: the runs that move most, never two labels on top of each other."""

import math

from nuggets_app.lib.plots import scatter_labels, scatter_plot


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


def test_nan_points_get_no_label_and_the_plot_still_renders():
    chosen = scatter_labels([0.1, math.nan, 0.8], [0.2, 0.5, 0.7], [1, 9, 2])
    assert chosen == [0, 2]
    svg = scatter_plot(
        ["a", "b", "c"], [0.1, math.nan, 0.8], [0.2, 0.5, 0.7],
        xlabel="x", ylabel="y", title="t", priority=[1, 9, 2],
    )  # fmt: skip
    assert svg.startswith(b"<?xml")
