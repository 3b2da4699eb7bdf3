"""Wilson intervals against published values (Newcombe 1998, Table I: 95%)."""

import math

import pytest

from nuggets_app.ir.proportions import wilson_interval


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_interval_matches_newcombes_table(k, n, low, high):
    found = wilson_interval(k, n)
    assert found.p == k / n
    assert found.low == pytest.approx(low, abs=1e-4)
    assert found.high == pytest.approx(high, abs=1e-4)


def test_no_trials_give_nan_and_bad_counts_are_refused():
    assert math.isnan(wilson_interval(0, 0).p)
    with pytest.raises(ValueError, match="k <= n"):
        wilson_interval(5, 3)
