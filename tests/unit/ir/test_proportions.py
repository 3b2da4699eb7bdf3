"""Wilson intervals against published values (Newcombe 1998, Table I: 95%), and the
interval of a mean of proportions over topics: inside [0, 1], containing the mean,
equal to the score test's acceptance set found by brute force."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nuggets_app.ir.proportions import (
    mean_proportion_interval,
    wilson_bounds,
    wilson_interval,
)


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


# --- a mean of proportions over topics as clusters ------------------------------------
Z = 1.959963984540054
proportions = st.lists(
    st.one_of(
        st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
        st.sampled_from([0.0, 1.0, 1 / 3, 0.5]),
    ),
    min_size=1,
    max_size=40,
)


@given(proportions)
@settings(max_examples=400, deadline=None)
def test_every_interval_lies_in_0_1_and_contains_the_mean(values):
    found = mean_proportion_interval(values)
    assert 0.0 <= found.low <= found.mean <= found.high <= 1.0
    assert found.mean == pytest.approx(math.fsum(values) / len(values))
    assert found.n_eff >= found.n
    # Never narrower than a positive width: a few topics never pin the mean down.
    assert found.high - found.low > 0


@given(proportions)
@settings(max_examples=200, deadline=None)
def test_the_interval_is_the_score_tests_acceptance_set(values):
    """Brute force: every μ on a fine grid that the score test at the effective
    size accepts, ``(p - μ)² <= z² μ(1 - μ) / n_eff``, lies inside the interval,
    and the interval's ends are within one grid step of accepted values."""
    found = mean_proportion_interval(values)
    steps = 20_000
    grid = [i / steps for i in range(steps + 1)]
    accepted = [
        mu
        for mu in grid
        if (found.mean - mu) ** 2 <= Z * Z * mu * (1 - mu) / found.n_eff * (1 + 1e-9)
    ]
    if not accepted:  # an interval narrower than the grid's step holds no point
        assert found.high - found.low <= 1 / steps
        return
    assert found.low <= min(accepted) + 1e-9
    assert max(accepted) <= found.high + 1e-9
    assert min(accepted) - found.low <= 1 / steps + 1e-9
    assert found.high - max(accepted) <= 1 / steps + 1e-9


def _effective_size(values: list[float]) -> float:
    """Korn and Graubard's effective size by its definition, floored at n."""
    n = len(values)
    mean = sum(values) / n
    var_mean = sum((v - mean) ** 2 for v in values) / (n - 1) / n
    t = {1: 12.706204736174707, 2: 4.302652729749464, 4: 2.7764451051977934}[n - 1]
    return max(n, (Z / t) ** 2 * mean * (1 - mean) / var_mean)


@pytest.mark.parametrize(
    "values",
    [[0.1, 0.3], [0.2, 0.4, 0.9], [0.45, 0.5, 0.5, 0.55, 0.5], [0.49, 0.51]],
)
def test_the_effective_size_uses_the_topics_spread(values):
    found = mean_proportion_interval(values)
    assert found.n_eff == pytest.approx(_effective_size(values))
    low, high = wilson_bounds(found.mean, found.n_eff)
    assert (found.low, found.high) == (pytest.approx(low), pytest.approx(high))


def test_agreeing_topics_get_wilsons_interval_with_a_trial_each():
    zero = mean_proportion_interval([0.0, 0.0])
    assert (zero.low, zero.n_eff) == (0.0, 2.0)
    assert zero.high == pytest.approx(Z * Z / (2 + Z * Z))  # 0.6576
    one = mean_proportion_interval([1.0] * 5)
    assert one.high == 1.0
    assert one.low == pytest.approx(wilson_interval(5, 5).low)
    third = mean_proportion_interval([1 / 3] * 3)
    assert third.low < 1 / 3 < third.high


def test_a_value_outside_0_1_is_refused_and_no_value_gives_nan():
    with pytest.raises(ValueError, match=r"proportion in \[0, 1\]"):
        mean_proportion_interval([0.5, 1.2])
    assert math.isnan(mean_proportion_interval([]).mean)


def test_topics_equal_but_for_rounding_get_the_small_n_bound():
    """Three equal recalls whose mean is a last bit off them: no spread, so the
    interval is Wilson's at n, as for values exactly equal."""
    values = [0.4999399402501218] * 3
    found = mean_proportion_interval(values)
    assert found.n_eff == 3
    assert found.high - found.low > 0.5
