"""Answers scored by nuggets: recall, the t interval over topics, pair agreement."""

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


def test_the_interval_is_students_t_over_topics():
    values = [0.2, 0.4, 0.9]
    mean = sum(values) / 3
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / 2)
    half = 4.302652729911275 * sd / math.sqrt(3)  # t(0.975, 2), from tables
    got = mean_interval(values)
    assert (got.mean, got.n) == (pytest.approx(mean), 3)
    assert (got.low, got.high) == (
        pytest.approx(mean - half),
        pytest.approx(mean + half),
    )
    assert mean_interval([0.3]).low == mean_interval([0.3]).high == 0.3
    assert math.isnan(mean_interval([]).mean)


def test_pair_agreement_counts():
    a = pair_agreement(
        [(True, True), (True, False), (False, True), (False, False), (True, True)]
    )
    assert (a.tp, a.fp, a.fn, a.tn) == (2, 1, 1, 1)
    assert (a.precision, a.recall, a.f1) == (2 / 3, 2 / 3, pytest.approx(2 / 3))
