"""The nugget choice's verdict: kept only where the held-out log-loss with the nugget
features is lower by at least the tolerance."""

from __future__ import annotations

import math

import pytest

from nuggets_app.learning.family_choice import (
    LOGLOSS_TOLERANCE,
    NuggetChoice,
    log_loss,
    verdict,
)


def test_log_loss_of_known_predictions():
    assert log_loss([]) is None
    assert log_loss([(0.5, 1), (0.5, 0)]) == pytest.approx(math.log(2))
    assert log_loss([(1.0, 1)]) == pytest.approx(-math.log(1 - 1e-6))


@pytest.mark.parametrize(
    ("with_", "without", "expected"),
    [
        (0.300, 0.300 + 2 * LOGLOSS_TOLERANCE, "pay"),
        (0.300 + 2 * LOGLOSS_TOLERANCE, 0.300, "hurt"),
        (0.300, 0.300 + LOGLOSS_TOLERANCE / 2, "nothing"),
        (None, 0.3, "nothing"),
    ],
)
def test_verdict(with_, without, expected):
    assert verdict(with_, without) == expected


def test_only_a_paying_family_is_kept():
    paying = NuggetChoice(0.30, 0.31, 10, "pay", [])
    assert paying.kept
    assert paying.ablate == ()
    for found in ("hurt", "nothing"):
        choice = NuggetChoice(0.30, 0.30, 10, found, [])
        assert not choice.kept
        assert choice.ablate == ("nuggets",)
        assert choice.as_dict()["kept"] is False
