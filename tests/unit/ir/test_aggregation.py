"""The aggregation rules against a brute-force reading of their definitions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nuggets_app.ir.aggregation import Aggregation, AggregationError, grade_combine

GRADES = {"alice": 2, "bob": 0, "carol": 0, "dave": 2}


def test_highest_takes_the_highest_grade():
    assert grade_combine(GRADES, Aggregation()) == (2, "highest")


def test_a_majority_tie_goes_to_the_stated_side():
    assert grade_combine(GRADES, Aggregation(rule="majority")) == (2, "majority")
    lower = Aggregation(rule="majority", ties="lower")
    assert grade_combine(GRADES, lower) == (0, "majority")
    assert grade_combine({**GRADES, "erin": 0}, Aggregation(rule="majority"))[0] == 0


def test_primary_falls_back_where_the_primary_did_not_judge():
    rule = Aggregation(rule="primary", primary="bob", fallback="majority")
    assert grade_combine(GRADES, rule) == (0, "primary")
    assert grade_combine({"alice": 1, "dave": 1, "x": 2}, rule) == (1, "majority")


def test_adjudicated_wins_and_falls_back_without_a_decision():
    rule = Aggregation(rule="adjudicated")
    assert grade_combine(GRADES, rule, adjudicated=1) == (1, "adjudicated")
    assert grade_combine(GRADES, rule) == (2, "highest")
    assert grade_combine({}, rule, adjudicated=0) == (0, "adjudicated")


def test_bad_rules_are_refused_with_the_field():
    with pytest.raises(AggregationError, match="one of highest"):
        Aggregation(rule="mean")
    with pytest.raises(AggregationError, match="primary assessor"):
        Aggregation(rule="primary")
    with pytest.raises(AggregationError, match="ties"):
        Aggregation(rule="majority", ties="random")
    assert Aggregation.from_dict({}) == Aggregation()
    rule = Aggregation(rule="primary", primary="bob")
    stored = {k: v for k, v in rule.as_dict().items() if k != "text"}
    assert Aggregation.from_dict(stored) == rule
    assert "bob" in rule.describe()


@given(
    st.dictionaries(st.sampled_from("abcdef"), st.integers(0, 3), min_size=1),
    st.sampled_from(["higher", "lower"]),
)
def test_majority_is_the_most_frequent_grade(grades, ties):
    grade, _ = grade_combine(grades, Aggregation(rule="majority", ties=ties))
    counts = {g: list(grades.values()).count(g) for g in set(grades.values())}
    assert counts[grade] == max(counts.values())
    tied = [g for g, c in counts.items() if c == counts[grade]]
    assert grade == (max(tied) if ties == "higher" else min(tied))
