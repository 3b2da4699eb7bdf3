"""statAP sampling of pools: AP-prior weights, the pool distribution, draws.

The normative specification is docs/reference/algorithms.md, section 1. Summary:

* AP-prior weight of rank ``r`` in a list of ``Z`` documents:
  ``w_Z(r) = (1 + H(Z) - H(r-1)) / (2Z)`` (sums to 1 over ``r = 1..Z``).
* Pool distribution: ``p(d) = (1/S) * sum_s w_{Z_s}(rank_s(d))`` over the ``S`` runs that
  return at least one document for the topic.
* statAP design: independent draws with replacement from ``p`` until ``n`` distinct
  documents are held (or ``max_draws``, default ``100 * |pool|``). With ``K`` draws made,
  ``pi(d) = 1 - (1 - p(d))^K``. With ``stop="draws"`` exactly ``K = n`` draws are made
  and ``pi`` is exact; stopping on a distinct count ignores the stopping rule in ``pi``
  (the conventional approximation, see ``PI_STOP_IGNORED``).

Every draw iterates documents and runs in sorted order, so a seed gives the same sample
whatever order the caller's mappings have. Draws are prefix-stable: asking for more
documents with the same seed repeats the earlier draws and continues after them, which
is how a sample is extended.

No Django here (import-linter enforces it).
"""

from __future__ import annotations

import math
import random
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate
from typing import Literal

from nuggets_app.errors import DomainError

Stop = Literal["distinct", "draws"]

# How the inclusion probabilities of a draw were obtained (stored with the sample).
PI_EXACT = "exact"  # fixed number of draws, or simple random sampling
PI_STOP_IGNORED = (
    "stop-rule-ignored"  # distinct-count stopping, 1-(1-p)^K approximation
)
PI_CENSUS = "census"  # n >= pool size: every document judged, pi = 1
PI_CERTAIN = "certain"  # depth selection: pi = 1 for chosen documents, 0 for others

# Relative tolerance on sum(p) == 1: p comes from sums of floats.
_SUM_TOLERANCE = 1e-9


class SamplingError(DomainError):
    """Bad input to a sampling function; the message names the offending value."""


@dataclass(frozen=True)
class StatapDraw:
    """The outcome of one topic's draw.

    ``order`` lists the distinct sampled docnos in order of first draw (the assessor's
    queue). ``draws`` is ``K``, the number of draws made, repeats included.
    ``inclusion`` maps every pool docno to its inclusion probability. ``run_draws``
    holds ``K_s`` per run for the per-run-quota design.
    """

    order: tuple[str, ...]
    draws: int
    inclusion: dict[str, float]
    pi_method: str = PI_EXACT
    run_draws: dict[str, int] = field(default_factory=dict)


@lru_cache(maxsize=4096)
def _weights(size: int) -> tuple[float, ...]:
    if size < 1:
        raise SamplingError(f"list length must be at least 1, got {size}")
    weights = [0.0] * size
    # H(Z) - H(r-1) is the tail sum 1/r + ... + 1/Z; summing it from the small end keeps
    # the rounding error at a few ulps instead of cancelling two large harmonic numbers.
    tail = 0.0
    for rank in range(size, 0, -1):
        tail += 1.0 / rank
        weights[rank - 1] = (1.0 + tail) / (2 * size)
    return tuple(weights)


def ap_prior_weights(Z: int) -> list[float]:
    """AP-prior weights ``w_Z(1..Z)``: ``w_Z(r) = (1 + H(Z) - H(r-1)) / (2Z)``.

    Exact formula (not the ``ln(Z/r)`` approximation); the weights sum to 1 and strictly
    decrease, with ``w_Z(Z) = (1 + 1/Z) / (2Z)``.
    """
    return list(_weights(Z))


def _check_ranking(run: str, ranking: Sequence[str]) -> None:
    if len(set(ranking)) != len(ranking):
        seen: set[str] = set()
        for position, docno in enumerate(ranking, start=1):
            if docno in seen:
                raise SamplingError(
                    f"run {run}: document {docno} appears twice (rank {position})"
                )
            seen.add(docno)


def pool_distribution(rankings: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """The statAP sampling distribution ``p(d)`` of one topic's pool.

    ``rankings`` maps a run name to its docnos ranked best first, already cut at the pool
    depth. Runs with no documents are left out of ``S``. The result maps every pooled
    docno to ``p(d) > 0``; the values sum to 1. Runs are summed in sorted name order so
    the floating-point result does not depend on the mapping's order.
    """
    runs = sorted(name for name, ranking in rankings.items() if len(ranking) > 0)
    totals: dict[str, float] = {}
    for name in runs:
        ranking = rankings[name]
        _check_ranking(name, ranking)
        for docno, weight in zip(ranking, _weights(len(ranking)), strict=True):
            totals[docno] = totals.get(docno, 0.0) + weight
    count = len(runs)
    return {docno: total / count for docno, total in totals.items()}


def inclusion_probabilities(p: Mapping[str, float], draws: int) -> dict[str, float]:
    """``pi(d) = 1 - (1 - p(d))^K`` for ``K = draws``, as ``-expm1(K * log1p(-p))``."""
    if draws < 0:
        raise SamplingError(f"number of draws must be >= 0, got {draws}")
    if draws == 0:
        return dict.fromkeys(p, 0.0)
    return {
        docno: 1.0 if prob >= 1.0 else -math.expm1(draws * math.log1p(-prob))
        for docno, prob in p.items()
    }


def _check_distribution(p: Mapping[str, float]) -> None:
    if not p:
        raise SamplingError("the pool is empty")
    for docno, prob in p.items():
        if not prob > 0.0:
            raise SamplingError(f"document {docno} has probability {prob!r}, not > 0")
    total = math.fsum(p.values())
    if abs(total - 1.0) > _SUM_TOLERANCE:
        raise SamplingError(f"probabilities sum to {total!r}, not 1")


def _check_size(n: int, stop: str) -> None:
    if stop not in ("distinct", "draws"):
        raise SamplingError(f"stop must be 'distinct' or 'draws', got {stop!r}")
    if n < 1:
        raise SamplingError(f"sample size must be at least 1, got {n}")


def _census(p: Mapping[str, float]) -> StatapDraw:
    # Everything is judged; the queue starts with the likeliest documents.
    order = tuple(sorted(p, key=lambda docno: (-p[docno], docno)))
    return StatapDraw(order, 0, dict.fromkeys(p, 1.0), PI_CENSUS)


def _draw_until(
    keys: Sequence[str],
    cumulative: Sequence[float],
    rng: random.Random,
    seen: dict[str, None],
    want: int,
    budget: int,
) -> int:
    """Draw from one cumulative distribution until ``seen`` gains ``want`` documents.

    Returns the number of draws made (at most ``budget``); ``seen`` is updated in place
    and keeps first-draw order.
    """
    rand = rng.random
    total = cumulative[-1]
    last = len(keys) - 1
    target = len(seen) + want
    made = 0
    while len(seen) < target and made < budget:
        docno = keys[bisect_right(cumulative, rand() * total, 0, last)]
        made += 1
        if docno not in seen:
            seen[docno] = None
    return made


def draw_statap(
    p: Mapping[str, float],
    n: int,
    rng: random.Random,
    max_draws: int | None = None,
    stop: Stop = "distinct",
) -> StatapDraw:
    """Draw a statAP sample from ``p`` (docs/reference/algorithms.md 1.3).

    ``stop="distinct"``: draw with replacement until ``n`` distinct documents are held or
    ``max_draws`` (default ``100 * |pool|``) draws are made; ``n >= |pool|`` judges the
    whole pool with ``pi = 1``. ``pi`` uses the realised ``K`` and ignores the stopping
    rule (``PI_STOP_IGNORED``).
    ``stop="draws"``: make exactly ``K = n`` draws; the number of distinct documents is
    random and ``pi`` is exact.
    """
    _check_size(n, stop)
    _check_distribution(p)
    if stop == "distinct" and n >= len(p):
        return _census(p)
    keys = sorted(p)
    cumulative = list(accumulate(p[docno] for docno in keys))
    seen: dict[str, None] = {}
    if stop == "draws":
        _draw_until(keys, cumulative, rng, seen, len(keys), n)
        # The design is n draws: once every document is held the rest cannot change
        # the sample and are skipped, but pi is that of n draws.
        made = n
        method = PI_EXACT
    else:
        budget = 100 * len(keys) if max_draws is None else max_draws
        made = _draw_until(keys, cumulative, rng, seen, n, budget)
        method = PI_STOP_IGNORED
    return StatapDraw(tuple(seen), made, inclusion_probabilities(p, made), method)


def draw_uniform(docnos: Iterable[str], n: int, rng: random.Random) -> StatapDraw:
    """Simple random sample of ``n`` documents without replacement.

    ``pi = min(n, N) / N`` for every pool document, exact. The queue is a seeded shuffle
    of the sorted docnos, cut at ``n``, so a larger ``n`` extends a smaller one.
    """
    _check_size(n, "distinct")
    keys = sorted(set(docnos))
    if not keys:
        raise SamplingError("the pool is empty")
    rng.shuffle(keys)
    chosen = tuple(keys[:n])
    prob = len(chosen) / len(keys)
    method = PI_CENSUS if prob == 1.0 else PI_EXACT
    return StatapDraw(chosen, len(chosen), dict.fromkeys(keys, prob), method)


def draw_depth(
    best_rank: Mapping[str, int], n: int, p: Mapping[str, float] | None = None
) -> StatapDraw:
    """The ``n`` best-ranked pool documents (``pi`` = 1 for them, 0 for the others).

    Ties on best rank go to the higher ``p(d)`` (documents retrieved high by more runs),
    then to the docno, so the selection is deterministic.
    """
    _check_size(n, "distinct")
    if not best_rank:
        raise SamplingError("the pool is empty")
    prior = p or {}
    ranked = sorted(best_rank, key=lambda d: (best_rank[d], -prior.get(d, 0.0), d))
    chosen = tuple(ranked[:n])
    inclusion = dict.fromkeys(best_rank, 0.0)
    inclusion.update(dict.fromkeys(chosen, 1.0))
    method = PI_CENSUS if len(chosen) == len(ranked) else PI_CERTAIN
    return StatapDraw(chosen, len(chosen), inclusion, method)


def draw_per_run_quota(
    rankings: Mapping[str, Sequence[str]],
    n: int,
    rng: random.Random,
    max_draws: int | None = None,
    stop: Stop = "distinct",
) -> StatapDraw:
    """statAP with a quota per run, so every run gets as many of its documents judged.

    Each run ``s`` draws with replacement from its own AP-prior ``w_{Z_s}`` over its own
    list. ``stop="distinct"``: runs take turns (in a seeded order), each turn drawing
    until the run holds one more distinct document of its own list, until the union holds
    ``n`` documents; quotas of runs then differ by at most one, and a run whose list is
    exhausted drops out. ``stop="draws"``: every run makes exactly ``n`` draws.

    With ``K_s`` draws by run ``s`` the draws are independent, so
    ``pi(d) = 1 - prod_s (1 - w_{Z_s}(rank_s(d)))^{K_s}``, computed as
    ``-expm1(sum_s K_s * log1p(-w_s(d)))``: exact for ``stop="draws"``; for
    ``stop="distinct"`` it ignores the stopping rule, as ``draw_statap`` does.
    """
    _check_size(n, stop)
    runs = sorted(name for name, ranking in rankings.items() if len(ranking) > 0)
    for name in runs:
        _check_ranking(name, rankings[name])
    pool = sorted({docno for name in runs for docno in rankings[name]})
    if not pool:
        raise SamplingError("the pool is empty")
    if stop == "distinct" and n >= len(pool):
        return _census(pool_distribution(rankings))
    cumulative = {
        name: list(accumulate(_weights(len(rankings[name])))) for name in runs
    }
    own: dict[str, dict[str, None]] = {name: {} for name in runs}
    run_draws = dict.fromkeys(runs, 0)
    union: dict[str, None] = {}
    if stop == "draws":
        for name in runs:
            run_draws[name] = _draw_until(
                rankings[name], cumulative[name], rng, own[name], len(pool), n
            )
            union.update(own[name])
        method = PI_EXACT
    else:
        budget = 100 * len(pool) if max_draws is None else max_draws
        _quota_rounds(rankings, cumulative, rng, own, run_draws, union, n, budget)
        method = PI_STOP_IGNORED
    inclusion = _quota_inclusion(rankings, runs, run_draws, pool)
    return StatapDraw(
        tuple(union), sum(run_draws.values()), inclusion, method, run_draws
    )


def _quota_rounds(
    rankings: Mapping[str, Sequence[str]],
    cumulative: Mapping[str, Sequence[float]],
    rng: random.Random,
    own: dict[str, dict[str, None]],
    run_draws: dict[str, int],
    union: dict[str, None],
    n: int,
    budget: int,
) -> None:
    turn_order = sorted(own)
    # A seeded turn order: the runs that get one more document than the others in the
    # last round are random, not the alphabetically first ones.
    rng.shuffle(turn_order)
    made = 0
    while len(union) < n and made < budget:
        active = [name for name in turn_order if len(own[name]) < len(rankings[name])]
        if not active:
            break
        for name in active:
            step = _draw_until(
                rankings[name], cumulative[name], rng, own[name], 1, budget - made
            )
            made += step
            run_draws[name] += step
            union.update(own[name])
            if len(union) >= n or made >= budget:
                break


def _quota_inclusion(
    rankings: Mapping[str, Sequence[str]],
    runs: Sequence[str],
    run_draws: Mapping[str, int],
    pool: Iterable[str],
) -> dict[str, float]:
    log_miss = dict.fromkeys(pool, 0.0)
    for name in runs:
        draws = run_draws[name]
        if draws == 0:
            continue
        for docno, weight in zip(
            rankings[name], _weights(len(rankings[name])), strict=True
        ):
            # weight == 1 only for a one-document list: log1p(-1) = -inf, pi = 1.
            log_miss[docno] += (
                -math.inf if weight >= 1.0 else draws * math.log1p(-weight)
            )
    return {docno: -math.expm1(value) for docno, value in log_miss.items()}
