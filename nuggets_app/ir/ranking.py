"""Comparing the system rankings two qrels induce: Kendall's tau, tau_AP, moves.

* Kendall's tau (tau-b, scipy) between the runs' scores under the two qrels.
* tau_AP (Yilmaz, Aslam & Robertson, SIGIR 2008), which weighs disagreements near the
  top more: for a reference ranking and a candidate ranking of the same N systems,

      tau_AP = 2/(N-1) · Σ_{i=2..N} C(i)/(i-1) - 1

  where ``C(i)`` is the number of systems above rank i in the candidate that the
  reference also ranks above the candidate's i-th system. Identical rankings give 1,
  reversed rankings -1. It is not symmetric; :func:`tau_ap_symmetric` averages both ways.
* The runs that move most: rank under A, rank under B and the difference.

Systems are ranked by score descending, ties by name ascending.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scipy import stats


@dataclass(frozen=True)
class RankMove:
    """One run's rank (1 = best) and score under qrels A and B."""

    run: str
    rank_a: int
    rank_b: int
    score_a: float
    score_b: float

    @property
    def delta(self) -> int:
        """Places gained going from A to B (positive = better under B)."""
        return self.rank_a - self.rank_b


@dataclass(frozen=True)
class RankingComparison:
    """Agreement of the rankings under A and B, and every run's move."""

    runs: int
    kendall_tau: float
    tau_ap: float
    tau_ap_symmetric: float
    moves: tuple[RankMove, ...]  # largest |delta| first


def system_ranking(scores: Mapping[str, float]) -> list[str]:
    """Run names, best score first (ties by name ascending)."""
    return sorted(scores, key=lambda name: (-scores[name], name))


# Digits a tau keeps: the rest is floating-point noise (tau-b's square roots give
# 0.9999999999999999 for two identical rankings with ties), never a figure.
TAU_DIGITS = 12


def kendall_tau(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Kendall's tau-b between the scores of the runs present in both mappings
    (rounded to ``TAU_DIGITS`` decimals)."""
    common = sorted(set(a) & set(b))
    if len(common) < 2:
        return math.nan
    result = stats.kendalltau([a[r] for r in common], [b[r] for r in common])
    return round(float(result.statistic), TAU_DIGITS)


def tau_ap(reference: Sequence[str], candidate: Sequence[str]) -> float:
    """tau_AP of ``candidate`` against ``reference`` (both best first, same items)."""
    if sorted(reference) != sorted(candidate) or len(set(reference)) != len(reference):
        raise ValueError("tau_AP needs two rankings of the same distinct items")
    n = len(candidate)
    if n < 2:
        return math.nan
    position = {item: i for i, item in enumerate(reference)}
    total = 0.0
    for i in range(1, n):
        here = position[candidate[i]]
        correct = sum(1 for above in candidate[:i] if position[above] < here)
        total += correct / i
    return round(2 * total / (n - 1) - 1, TAU_DIGITS)


def tau_ap_symmetric(a: Sequence[str], b: Sequence[str]) -> float:
    """Mean of tau_AP in both directions."""
    return (tau_ap(a, b) + tau_ap(b, a)) / 2


def rank_moves(a: Mapping[str, float], b: Mapping[str, float]) -> list[RankMove]:
    """Every run's rank under A and B, the runs that move most first."""
    common = set(a) & set(b)
    rank_a = {r: i for i, r in enumerate(system_ranking({r: a[r] for r in common}), 1)}
    rank_b = {r: i for i, r in enumerate(system_ranking({r: b[r] for r in common}), 1)}
    moves = [RankMove(r, rank_a[r], rank_b[r], a[r], b[r]) for r in common]
    return sorted(moves, key=lambda m: (-abs(m.delta), m.rank_a, m.run))


def ranking_compare(
    a: Mapping[str, float], b: Mapping[str, float]
) -> RankingComparison:
    """Compare per-run scores under qrels A (reference) and B (``run -> score``)."""
    common = set(a) & set(b)
    ranked_a = system_ranking({r: a[r] for r in common})
    ranked_b = system_ranking({r: b[r] for r in common})
    return RankingComparison(
        runs=len(common),
        kendall_tau=kendall_tau(a, b),
        tau_ap=tau_ap(ranked_a, ranked_b),
        tau_ap_symmetric=tau_ap_symmetric(ranked_a, ranked_b),
        moves=tuple(rank_moves(a, b)),
    )
