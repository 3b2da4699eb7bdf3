"""The judge-design study's exact design variance of R̂ against brute-force
enumeration of every sequence of draws."""

from __future__ import annotations

import math
from itertools import product

import pytest

from lab.studies.judge_design import exact_variance


def _brute_variance(p: dict[str, float], draws: int, relevant: list[str]) -> float:
    pi = {d: 1 - (1 - p[d]) ** draws for d in p}
    mean = second = 0.0
    for sequence in product(sorted(p), repeat=draws):
        prob = math.prod(p[d] for d in sequence)
        estimate = sum(1 / pi[d] for d in set(sequence) if d in relevant)
        mean += prob * estimate
        second += prob * estimate * estimate
    assert mean == pytest.approx(len(relevant))  # Horvitz-Thompson is unbiased
    return second - mean * mean


@pytest.mark.parametrize("draws", [1, 2, 4])
def test_the_exact_variance_is_that_of_every_sequence_of_draws(draws):
    p = {"a": 0.4, "b": 0.3, "c": 0.2, "d": 0.1}
    relevant = ["a", "c", "d"]
    assert exact_variance(p, draws, relevant) == pytest.approx(
        _brute_variance(p, draws, relevant)
    )
