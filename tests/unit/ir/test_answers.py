"""Answers scored by nuggets: recall, the interval over topics, pair agreement."""

import math

import pytest

from matcher import MatchOptions, NuggetSpec
from nuggets_app.ir.answers import (
    AnswerMatcher,
    answer_recall,
    mean_interval,
    pair_agreement,
)


def test_an_answer_contains_the_nuggets_it_states_with_their_spans():
    nuggets = [
        NuggetSpec(
            "a", "nuclear energy produces very low greenhouse gas emissions", grade=2
        ),
        NuggetSpec("b", "fusion energy is experimental", grade=1),
        NuggetSpec("c", "nuclear waste is toxic and difficult to manage", grade=2),
    ]
    text = "Fusion energy is still experimental. Nuclear waste is toxic and difficult to manage."
    found = AnswerMatcher(nuggets, MatchOptions(), 0.5).score(text)
    assert [f.contained for f in found] == [False, True, True]
    for f in found:
        for a, b in f.spans:
            assert text[a:b].lower().split()[0] in {
                "fusion",
                "nuclear",
                "energy",
                "waste",
                "toxic",
            }
    recall, weighted = answer_recall(found)
    assert recall == pytest.approx(2 / 3)
    assert weighted == pytest.approx((0.5 + 1.0) / (1.0 + 0.5 + 1.0))


def test_a_systems_interval_stays_in_0_1_on_two_topics():
    """The issue's figures: recall 0.114 on two topics had [-1.33, 1.56] under
    Student's t; a system with 0 on both topics had [0, 0]."""
    got = mean_interval([0.0, 0.228])
    assert got.mean == pytest.approx(0.114)
    assert 0.0 <= got.low <= got.mean <= got.high <= 1.0
    zero = mean_interval([0.0, 0.0])
    assert (zero.low, zero.n) == (0.0, 2)
    # Wilson with one trial per topic: z²/(n + z²).
    assert zero.high == pytest.approx(1.959963984540054**2 / (2 + 1.959963984540054**2))
    assert mean_interval([0.3]).low < 0.3 < mean_interval([0.3]).high
    assert math.isnan(mean_interval([]).mean)


def test_pair_agreement_counts():
    a = pair_agreement(
        [(True, True), (True, False), (False, True), (False, False), (True, True)]
    )
    assert (a.tp, a.fp, a.fn, a.tn) == (2, 1, 1, 1)
    assert (a.precision, a.recall, a.f1) == (2 / 3, 2 / 3, pytest.approx(2 / 3))
