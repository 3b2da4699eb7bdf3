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


def test_a_judge_is_a_family_named_by_its_judge():
    from nuggets_app.learning.ablation import (
        ablate_parse,
        judge_feature_names,
        kept_columns,
    )

    assert ablate_parse("judge:TREMA-4prompts,Nuggets") == (
        "judge:TREMA-4prompts",
        "nuggets",
    )
    names = ("topic_bm25", *judge_feature_names("a"), *judge_feature_names("b"))
    assert kept_columns(names, ["judge:a"]) == [0, 3, 4]
    with pytest.raises(Exception, match="unknown feature family"):
        ablate_parse("judge:")


def test_families_are_decided_in_turn_each_against_what_was_kept():
    """A column equal to the label pays; a column of noise is left out."""
    import numpy as np

    from nuggets_app.learning.ablation import judge_feature_names
    from nuggets_app.learning.family_choice import families_choice
    from nuggets_app.learning.relevance_features import FEATURE_NAMES

    rng = np.random.default_rng(5)
    names = (*FEATURE_NAMES, *judge_feature_names("good"), *judge_feature_names("bad"))
    data = {}
    for t in range(10):
        y = (rng.random(30) < 0.3).astype(np.int64)
        x = rng.normal(size=(30, len(names)))
        x[:, names.index("judge:good:value")] = y + 0.3 * rng.normal(size=30)
        x[:, names.index("judge:good:missing")] = 0.0
        x[:, names.index("judge:bad:missing")] = 0.0
        data[str(t + 1)] = (x, y)
    chosen = families_choice(
        data, families=("judge:good", "judge:bad"), feature_names=names
    )
    assert [c.family for c in chosen.choices] == ["judge:good", "judge:bad"]
    assert chosen.of("judge:good").kept
    assert "judge:good" not in chosen.ablate
