"""Length bias: equal-size length bins, shares per bin, Mann-Whitney U tests."""

import math

import pytest

from nuggets_app.ir.lengthbias import (
    length_bias_table,
    length_bins,
    length_tests,
    mann_whitney,
)

LENGTHS = {f"d{i}": 10 * i for i in range(1, 9)}


def test_bins_have_equal_sizes_in_length_order():
    bins = length_bins(LENGTHS, bins=4)
    assert [sorted(d for d, b in bins.items() if b == k) for k in range(4)] == [
        ["d1", "d2"],
        ["d3", "d4"],
        ["d5", "d6"],
        ["d7", "d8"],
    ]
    sizes = [list(length_bins(LENGTHS, bins=3).values()).count(k) for k in range(3)]
    assert sizes == [3, 3, 2]


def test_shares_and_conditional_probability_per_bin():
    judgments = {("q1", "d1"): 1, ("q1", "d2"): 0, ("q1", "d8"): 1, ("q2", "d8"): 2}
    table = length_bias_table(LENGTHS, judgments, bins=4)
    assert [b.judged for b in table] == [2, 0, 0, 2]
    assert [b.relevant for b in table] == [1, 0, 0, 2]
    assert [b.judged_share for b in table] == [0.5, 0, 0, 0.5]
    assert [b.relevant_share for b in table] == pytest.approx([1 / 3, 0, 0, 2 / 3])
    assert table[0].p_rel_given_judged == 0.5
    assert math.isnan(table[1].p_rel_given_judged)
    assert table[3].p_rel_given_judged == 1.0
    assert (table[3].min_length, table[3].max_length) == (70, 80)


def test_mann_whitney_on_fully_separated_samples():
    # n = m = 3, U = 0: exact two-sided p = 2 * 1/C(6,3) = 0.1.
    test = mann_whitney("short", [1, 2, 3], "long", [4, 5, 6])
    assert test.u == 0
    assert test.p_value == pytest.approx(0.1)


def test_length_tests_cover_human_and_inferred_samples():
    human = {("q", "d1"): 1, ("q", "d2"): 0, ("q", "d7"): 0}
    inferred = {("q", "d8"): 1, ("q", "d6"): 1}
    tests = length_tests(LENGTHS, human, inferred)
    pairs = [(t.first, t.second) for t in tests]
    assert ("relevant", "inferred_relevant") in pairs
    by_pair = {(t.first, t.second): t for t in tests}
    assert by_pair["collection", "judged"].n_second == 3
    assert by_pair["relevant", "inferred_relevant"].n_first == 1
