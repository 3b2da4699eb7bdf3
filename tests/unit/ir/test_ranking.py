"""Kendall's tau and tau_AP (Yilmaz, Aslam & Robertson 2008) between system rankings."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nuggets_app.ir.ranking import (
    kendall_tau,
    rank_moves,
    ranking_compare,
    system_ranking,
    tau_ap,
    tau_ap_symmetric,
)

distinct_lists = st.lists(st.integers(0, 1000), min_size=2, max_size=12, unique=True)


def test_a_swap_at_the_top_costs_more_than_at_the_bottom():
    # By the definition: top swap C = (0, 2, 3) -> 2/3 * (0 + 1 + 1) - 1 = 1/3;
    # bottom swap C = (1, 2, 2) -> 2/3 * (1 + 1 + 2/3) - 1 = 7/9.
    assert tau_ap(list("abcd"), list("bacd")) == pytest.approx(1 / 3)
    assert tau_ap(list("abcd"), list("abdc")) == pytest.approx(7 / 9)


def test_a_ranking_against_itself_has_tau_exactly_one_even_with_ties():
    scores = {"r0": 0.6, "r1": 0.8, "r2": 0.1, "r3": 0.1, "r4": 0.8}
    assert kendall_tau(scores, scores) == 1.0
    assert repr(kendall_tau(scores, dict(scores))) == "1.0"
    items = [str(i) for i in range(30)]
    assert tau_ap(items, list(items)) == 1.0


def test_kendall_tau_of_one_swap_among_four_is_two_thirds():
    a = {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}
    b = {"a": 3.0, "b": 4.0, "c": 2.0, "d": 1.0}
    assert kendall_tau(a, b) == pytest.approx(4 / 6)


@given(distinct_lists)
def test_identical_rankings_give_one(items):
    assert tau_ap(items, list(items)) == pytest.approx(1.0)


@given(distinct_lists)
def test_reversed_rankings_give_minus_one(items):
    assert tau_ap(items, items[::-1]) == pytest.approx(-1.0)


@given(distinct_lists, st.randoms(use_true_random=False))
def test_tau_ap_stays_within_minus_one_and_one(items, rng):
    shuffled = list(items)
    rng.shuffle(shuffled)
    assert -1 - 1e-12 <= tau_ap(items, shuffled) <= 1 + 1e-12
    assert tau_ap_symmetric(items, shuffled) == pytest.approx(
        tau_ap_symmetric(shuffled, items)
    )


def test_tau_ap_needs_the_same_items():
    with pytest.raises(ValueError, match="same distinct items"):
        tau_ap(["a", "b"], ["a", "c"])


def test_system_ranking_breaks_ties_by_name():
    assert system_ranking({"b": 1.0, "a": 1.0, "c": 2.0}) == ["c", "a", "b"]


def test_runs_that_move_most_come_first():
    a = {"r1": 0.5, "r2": 0.4, "r3": 0.3, "r4": 0.2}
    b = {"r1": 0.1, "r2": 0.4, "r3": 0.3, "r4": 0.35}
    moves = rank_moves(a, b)
    assert (moves[0].run, moves[0].rank_a, moves[0].rank_b, moves[0].delta) == (
        "r1",
        1,
        4,
        -3,
    )
    comparison = ranking_compare(a, b)
    assert comparison.runs == 4
    assert comparison.moves == tuple(moves)
