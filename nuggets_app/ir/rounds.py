"""Samples drawn in rounds, guided by the relevance model, with unbiased weights.

Derivation: docs/explanation/rounds.md. One topic's pool ``P`` is judged in rounds
``t = 1..T`` with planned budgets ``n_t`` (``N = Σ n_t``) and fixed combination weights
``λ_t = n_t / N``:

* round 1 is statAP's design (:func:`nuggets_app.ir.sampling.draw_statap`): ``π_1``;
* round ``t >= 2`` draws without replacement from the documents not yet drawn, ``U_t``,
  by randomised systematic πps sampling (:func:`draw_systematic`, a fixed number of
  documents, exact first-order probabilities), with conditional inclusion
  probabilities ``π_t(d) = min(cap_t, c · m_d)``, ``Σ_{U_t} π_t = n_t``, from the model
  fitted on everything judged before (:func:`round_design`):
  ``m_d = (1 - alpha) h_d / Σ h + alpha q_d / Σ q`` with ``h_d = q_d sqrt(p_d (1 - p_d))``
  (``q`` the statAP pool distribution, the floor that keeps every ``π_t > 0``);
* the cap ``cap_t = λ_t / Λ_t`` (``Λ_t = λ_1 + .. + λ_t``) keeps every weight >= 1.

Estimator (a martingale combination of per-round Horvitz-Thompson estimates): for any
fixed vector ``z`` over the pool, round ``t``'s estimate of ``Σ_P z`` is
``Ẑ_t = Σ_{drawn before t} z + Σ_{S_t} z / π_t``, unbiased conditionally on the earlier
rounds, and ``Ẑ = Σ_t λ_t Ẑ_t`` is unbiased. It is linear: a document drawn in round
``t`` has weight ``w_d = λ_t / π_t(d) + Σ_{u > t} λ_u`` (:func:`round_weights`), so
``E[1[d ∈ S] w_d] = 1`` for every document and every Horvitz-Thompson sum of statAP and
of the model-assisted estimator stays unbiased with ``π`` replaced by ``1 / w_d`` (the
*effective* inclusion probability, <= 1 thanks to the caps). The variance of ``Ẑ`` is
``Σ_t λ_t² E[Var(Ẑ_t | earlier rounds)]``, estimated per document by
``v_d = λ_t² (1 - π_t) / π_t²`` (Poisson approximation of each round's design).

``design="top"`` is HiCAL-style judging for reference: later rounds take the ``n_t``
unjudged documents with the highest ``p``; every judged document gets weight 1, which
is biased (what is never drawn can never be weighted back). No Django here.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from nuggets_app.ir.prels import PrelsRecord, TopicPrels, prels_load
from nuggets_app.ir.sampling import SamplingError, Stop, draw_statap

Design = Literal["model", "top"]
DESIGNS = ("model", "top")
ALPHA = 0.2  # the share of the statAP distribution mixed into a later round's design


@dataclass(frozen=True)
class Round:
    """One round of one topic: the drawn docnos in queue order and ``π_t`` of every
    document that could be drawn (``U_t``)."""

    number: int
    order: tuple[str, ...]
    inclusion: dict[str, float]


@dataclass(frozen=True)
class DocWeight:
    """A drawn document's round, its conditional ``π_t``, weight ``w`` (``1/π`` of the
    estimators) and variance factor ``v``."""

    round: int
    round_prob: float
    weight: float
    var_weight: float

    @property
    def inclusion_prob(self) -> float:
        """The effective inclusion probability ``1 / w`` (in (0, 1])."""
        return 1.0 / self.weight


def round_budgets(total: int, rounds: int) -> list[int]:
    """``total`` split into ``rounds`` near-equal budgets, the larger ones first."""
    if rounds < 1:
        raise SamplingError(f"rounds must be at least 1, got {rounds}")
    if total < rounds:
        raise SamplingError(f"a budget of {total} cannot fill {rounds} rounds")
    base, extra = divmod(total, rounds)
    return [base + (1 if t < extra else 0) for t in range(rounds)]


def round_lambdas(budgets: Sequence[int]) -> list[float]:
    """``λ_t = n_t / N``: fixed before round 1, so the combination stays unbiased."""
    total = sum(budgets)
    return [n / total for n in budgets]


def round_cap(lambdas: Sequence[float], number: int) -> float:
    """``cap_t = λ_t / Λ_t`` for round ``number`` (1-based); 1 for round 1."""
    return lambdas[number - 1] / math.fsum(lambdas[:number])


def capped_probabilities(
    mass: Mapping[str, float], n: float, cap: float = 1.0
) -> dict[str, float]:
    """``π_d = min(cap, c · m_d)`` with ``Σ π = min(n, cap · |U|)`` (``m_d > 0``)."""
    if not mass:
        return {}
    if any(not m > 0 for m in mass.values()):
        raise SamplingError("every document needs a positive design mass")
    target = min(float(n), cap * len(mass))
    capped: set[str] = set()
    while True:
        free = math.fsum(m for d, m in mass.items() if d not in capped)
        scale = (target - cap * len(capped)) / free if free > 0 else 0.0
        newly = {d for d, m in mass.items() if d not in capped and scale * m >= cap}
        if not newly:
            break
        capped |= newly
    return {d: cap if d in capped else scale * m for d, m in mass.items()}


def round_design(
    prior: Mapping[str, float],
    probs: Mapping[str, float],
    remaining: Sequence[str],
    n: int,
    *,
    cap: float = 1.0,
    alpha: float = ALPHA,
    importance: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """A later round's ``π_t`` over ``remaining`` (see the module doc).

    ``prior`` is the statAP pool distribution ``q``; ``probs`` the model's ``p`` (a
    missing document has p = 0). ``alpha`` in (0, 1] is the floor's share.
    ``importance`` (default ``q``) weighs the uncertainty ``sqrt(p(1-p))``, e.g.
    :func:`ap_importance`.
    """
    if not 0 < alpha <= 1:
        raise SamplingError(f"alpha must be in (0, 1], got {alpha}")
    keys = sorted(remaining)
    q = {d: prior[d] for d in keys}
    q_total = math.fsum(q.values())
    weight = importance if importance is not None else q
    h = {
        d: weight.get(d, 0.0)
        * math.sqrt(max(probs.get(d, 0.0) * (1 - probs.get(d, 0.0)), 0.0))
        for d in keys
    }
    h_total = math.fsum(h.values())
    share = alpha if h_total > 0 else 1.0
    mass = {
        d: share * q[d] / q_total + ((1 - share) * h[d] / h_total if h_total > 0 else 0)
        for d in keys
    }
    return capped_probabilities(mass, n, cap)


def ap_importance(
    rankings: Mapping[str, Sequence[str]], probs: Mapping[str, float]
) -> dict[str, float]:
    """How much each pooled document moves the runs' AP: ``sqrt(Σ_s a_{d,s}²)`` with
    ``a_{d,s}`` the derivative of run ``s``'s AP in ``y_d`` at the model's expectation
    (the linearisation of :mod:`nuggets_app.ir.model_assisted`): with ``R = Σ p``,
    ``a = ((1 + Σ_{k<r} p_k)/r + Σ_{k>r} p_k/k - AP_s) / R`` at rank ``r`` of the
    run, ``-AP_s / R`` when the run does not list ``d``. A floor of 1e-9 keeps it > 0.
    """
    pool = sorted({d for ranking in rankings.values() for d in ranking})
    total = math.fsum(probs.get(d, 0.0) for d in pool)
    if total <= 0:
        return dict.fromkeys(pool, 1.0)
    squares = dict.fromkeys(pool, 0.0)
    for ranking in rankings.values():
        if not ranking:
            continue
        p = [probs.get(d, 0.0) for d in ranking]
        above = 0.0
        prec = []
        for rank, value in enumerate(p, 1):
            prec.append((1.0 + above) / rank)
            above += value
        ap = math.fsum(v * c for v, c in zip(p, prec, strict=True)) / total
        tail = [0.0] * (len(p) + 1)
        for i in range(len(p) - 1, -1, -1):
            tail[i] = tail[i + 1] + p[i] / (i + 1)
        listed = set(ranking)
        for i, d in enumerate(ranking):
            a = (prec[i] + tail[i + 1] - ap) / total
            squares[d] += a * a
        out = (ap / total) ** 2
        for d in pool:
            if d not in listed:
                squares[d] += out
    return {d: max(math.sqrt(v), 1e-9) for d, v in squares.items()}


def systematic_select(
    order: Sequence[str], inclusion: Mapping[str, float], start: float
) -> tuple[str, ...]:
    """Systematic selection along ``order``: the documents whose interval of the
    cumulated ``π`` holds one of the points ``start, start + 1, ...`` (each ``π <= 1``,
    so no document twice; ``P(d) = π_d`` for ``start ~ U[0, 1)``)."""
    chosen: list[str] = []
    low = 0.0
    point = start
    for docno in order:
        high = low + inclusion[docno]
        if low <= point < high:
            chosen.append(docno)
            point += 1.0
        low = high
    return tuple(chosen)


def draw_systematic(
    inclusion: Mapping[str, float], rng: random.Random
) -> tuple[str, ...]:
    """Randomised systematic πps sample: a seeded shuffle of the sorted docnos, then
    :func:`systematic_select` from a uniform start. Exact first-order probabilities;
    ``floor(Σπ)`` or ``ceil(Σπ)`` documents, in selection order."""
    order = sorted(inclusion)
    rng.shuffle(order)
    return systematic_select(order, inclusion, rng.random())


def draw_first_round(
    prior: Mapping[str, float], n: int, rng: random.Random, stop: Stop = "distinct"
) -> Round:
    """Round 1: statAP's design with ``n`` documents (``stop``: see ``draw_statap``)."""
    draw = draw_statap(prior, n, rng, stop=stop)
    return Round(1, draw.order, draw.inclusion)


def draw_next_round(
    prior: Mapping[str, float],
    probs: Mapping[str, float],
    drawn: Sequence[str] | set[str],
    n: int,
    number: int,
    lambdas: Sequence[float],
    rng: random.Random,
    *,
    design: Design = "model",
    alpha: float = ALPHA,
    importance: Mapping[str, float] | None = None,
) -> Round:
    """Round ``number`` >= 2 over the pool documents not in ``drawn`` (``importance``:
    see :func:`round_design`)."""
    if design not in DESIGNS:
        raise SamplingError(f"design must be one of {DESIGNS}, got {design!r}")
    if number < 2 or number > len(lambdas):
        raise SamplingError(f"round {number} is not a later round of {len(lambdas)}")
    taken = set(drawn)
    remaining = [d for d in sorted(prior) if d not in taken]
    if not remaining or n < 1:
        return Round(number, (), {})
    if design == "top":
        ranked = sorted(remaining, key=lambda d: (-probs.get(d, 0.0), -prior[d], d))
        chosen = tuple(ranked[:n])
        return Round(number, chosen, dict.fromkeys(chosen, 1.0))
    cap = round_cap(lambdas, number)
    inclusion = round_design(
        prior, probs, remaining, n, cap=cap, alpha=alpha, importance=importance
    )
    return Round(number, draw_systematic(inclusion, rng), inclusion)


def round_weights(
    rounds: Sequence[Round], lambdas: Sequence[float], *, design: Design = "model"
) -> dict[str, DocWeight]:
    """Weights of every drawn document over the rounds drawn so far.

    With fewer rounds than planned the ``λ`` of the drawn rounds are rescaled to sum
    to 1 (the plan being fixed, the estimator stays unbiased; weights stay >= 1).
    """
    used = lambdas[: len(rounds)]
    total = math.fsum(used)
    lam = [x / total for x in used]
    after = [math.fsum(lam[t + 1 :]) for t in range(len(lam))]
    out: dict[str, DocWeight] = {}
    for t, one in enumerate(rounds):
        for docno in one.order:
            pi = one.inclusion[docno]
            if design == "top":
                out[docno] = DocWeight(one.number, pi, 1.0, 0.0)
                continue
            weight = max(lam[t] / pi + after[t], 1.0)  # >= 1 up to rounding
            var = lam[t] * lam[t] * (1.0 - pi) / (pi * pi)
            out[docno] = DocWeight(one.number, pi, weight, var)
    return out


def rounds_prels(
    labels: Mapping[str, Mapping[str, int]],
    weights: Mapping[str, Mapping[str, DocWeight]],
) -> dict[str, TopicPrels]:
    """Prels of judged documents (``qid -> docno -> grade``) sampled in rounds: every
    document statAP-sampled (method 1) with ``π = 1 / w`` and its ``v`` as
    ``var_weight``; a judged document without a weight is left out."""
    records = []
    line = 0
    for qid in sorted(labels):
        for docno, grade in sorted(labels[qid].items()):
            weight = weights.get(qid, {}).get(docno)
            if weight is None:
                continue
            line += 1
            records.append(
                PrelsRecord(line, qid, docno, grade, 1, weight.inclusion_prob)
            )
    prels = prels_load(records, source="rounds")
    for qid, topic in prels.items():
        topic.var_weight = {
            d: weights[qid][d].var_weight for d in topic.rel if d in weights[qid]
        }
    return prels
