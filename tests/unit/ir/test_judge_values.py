"""A judge's label as one number, its cut and its strength of relevance."""

import pytest

from nuggets_app.ir.judge_values import (
    GRADED,
    PROBABILITIES,
    PROBABILITY_CUT,
    SCORE,
    judge_cut,
    label_value,
    relevance_strength,
)


def test_a_label_reads_by_the_judge_s_kind():
    assert label_value(GRADED, 2, None, None, 1) == 2.0
    assert label_value(
        PROBABILITIES, None, None, {"0": 0.2, "1": 0.5, "2": 0.3}, 1
    ) == (pytest.approx(0.8))
    assert label_value(PROBABILITIES, None, None, {"yes": 0.7}, 2) == 0.7
    assert label_value(SCORE, None, 3.5, None, 1) == 3.5
    assert label_value(GRADED, None, None, None, 1) is None


def test_the_cut_is_the_level_the_threshold_or_one_half():
    assert judge_cut(GRADED, [0, 3], 2, None) == 2.0
    assert judge_cut(PROBABILITIES, [0.9], 2, 0.8) == PROBABILITY_CUT
    assert judge_cut(SCORE, [4.0, 9.0], 1, 5.0) == 5.0
    assert judge_cut(SCORE, [0.1, 0.9], 1, None) == PROBABILITY_CUT
    assert judge_cut(SCORE, [0.1, 9.0], 1, None) is None


@pytest.mark.parametrize(
    ("value", "kind", "cut", "strength"),
    [
        (0.0, GRADED, 2.0, 0.0),
        (1.0, GRADED, 2.0, 0.5),
        (3.0, GRADED, 2.0, 1.0),
        (0.3, PROBABILITIES, 0.5, 0.3),
        (1.2, PROBABILITIES, 0.5, 1.0),
        (4.9, SCORE, 5.0, 0.0),
        (5.0, SCORE, 5.0, 1.0),
    ],
)
def test_the_strength_grows_with_the_judge_s_call(value, kind, cut, strength):
    assert relevance_strength(value, kind=kind, cut=cut) == strength
