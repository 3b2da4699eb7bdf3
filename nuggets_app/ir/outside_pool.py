"""Documents outside the pool: the model's error on them, a new run's interval, top-ups.

A new run's *unpooled* documents (outside the job's pool, down to its depth) were never
sampled, so the model-assisted estimate counts them with the relevance model's p alone
(:func:`nuggets_app.ir.model_assisted.topic_sample`, ``unsampled``). This module says
how wrong that p is, widens the run's interval by it, and makes the figure exact with a
top-up sample. Derivation: docs/explanation/model-assisted.md, "A new run's unpooled
documents". No Django here.

**Calibration.** The pooled documents that exactly one group of pooled runs brought
into the pool (:func:`unique_documents`) are what a new system's unpooled documents
look like: had that group been left out, they would be unpooled. Their cross-fitted p
did not see their topic's labels, and the statAP sample judges some of them (π > 0).
The model is recalibrated on them by one ratio ``θ`` (``q = min(1, θ p)``), estimated as
a Poisson rate: with design weights ``w = 1/π`` normalised to Kish's effective sample
size ``n_e = (Σ w)²/Σ w²`` (``w' = w n_e/Σ w``), ``Y' = Σ_S w' y`` and ``P' = Σ_S w' p``
over the judged unique documents, and a ``Gamma(k, k)`` prior (mean 1: the model is
calibrated until the sample says otherwise), the posterior is ``Gamma(k + Y', k + P')``:
``θ̃ = (k + Y')/(k + P')`` (the design ratio ``Ŷ/P̂ = Y'/P'`` shrunk towards 1 by
``k/(k + P')``, strongly when the sample expects few relevant unique documents) with
variance ``(k + Y')/(k + P')²``.

**The model's error on a run's unpooled documents.** AP̂ of a topic depends on each
unpooled document's ŷ = q through ``a_d = (∂N/∂y_d - AP̂)/R̂`` (the linearisation of
:mod:`nuggets_app.ir.model_assisted`). Given ``θ``, the labels are independent
Bernoulli(q): variance ``Σ_d a_d² q_d (1 - q_d)`` per topic; ``θ`` itself is shared by
every topic: ``(Σ_t Σ_d a_d p_d)² V(θ̃)``. The run's interval adds both, divided by
``n²``, to the sampling variance of its pooled part (:class:`RunInterval`).

**Top-up.** A sample of the run's unpooled documents of each topic, drawn with
replacement from the AP-prior weights of their ranks in the run (statAP's design on one
list, renormalised to the unpooled documents; ``K`` draws, ``π = 1 - (1 - p)^K``
exact). Judged, the documents enter the topic's sample as a second, independent
stratum: ŷ = q + (y - q)/π, the difference estimator, unbiased whatever θ, with the
linearised design variance instead of the model's error (:func:`top_up_prels`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from nuggets_app.errors import DomainError
from nuggets_app.ir.model_assisted import TopicSample
from nuggets_app.ir.prels import TopicPrels
from nuggets_app.ir.run_intervals import (
    BOUNDED_VAR,
    NAN,
    Z_95,
    RunEstimate,
    run_other,
    spanned,
)
from nuggets_app.ir.sampling import StatapDraw, ap_prior_weights, draw_statap

# The Gamma(k, k) prior of θ: worth k expected relevant documents at calibration.
PRIOR = 1.0

Rankings = Mapping[str, Mapping[str, Sequence[str]]]  # run -> qid -> ranked docnos


class OutsidePoolError(DomainError):
    """Bad input; the message names it."""


def contributors(names: Iterable[str], groups: Mapping[str, str]) -> dict[str, str]:
    """``{run: contributor}``: the runs' groups when there are two or more, else each
    run on its own (a pool built by one group has no other group to stand in for)."""
    names = sorted(names)
    of = {n: groups.get(n, n) for n in names}
    return of if len(set(of.values())) >= 2 else {n: n for n in names}


def unique_documents(
    rankings: Rankings, of: Mapping[str, str], depth: int | None
) -> dict[str, dict[str, str]]:
    """``{qid: {docno: contributor}}``: the documents of each topic's pool that only
    one contributor's runs (``of``: run -> contributor) rank within ``depth``."""
    seen: dict[str, dict[str, set[str]]] = {}
    for run, topics in rankings.items():
        for qid, ranking in topics.items():
            top = ranking if depth is None else ranking[:depth]
            into = seen.setdefault(qid, {})
            for docno in top:
                into.setdefault(docno, set()).add(of[run])
    return {
        qid: {d: next(iter(g)) for d, g in docs.items() if len(g) == 1}
        for qid, docs in seen.items()
    }


@dataclass(frozen=True)
class Evidence:
    """Judged evidence on the unique documents (of one contributor, or all)."""

    documents: int  # unique documents
    sum_p: float  # Σ_U p, the model's count of relevant ones
    judged: int  # of which sampled (π > 0)
    judged_relevant: int
    weighted_relevant: float  # Ŷ = Σ_S y/π, the design estimate of Σ_U y
    weighted_p: float  # P̂ = Σ_S p/π, the design estimate of Σ_U p
    eff_relevant: float  # Y' (Kish-normalised weights)
    eff_p: float  # P'

    @property
    def raw_ratio(self) -> float:
        """``Ŷ/P̂`` (NaN when nothing judged has p > 0)."""
        return self.weighted_relevant / self.weighted_p if self.weighted_p > 0 else NAN


@dataclass(frozen=True)
class Calibration:
    """θ̃ and its posterior variance, the evidence overall and per contributor."""

    ratio: float
    var: float
    prior: float
    evidence: Evidence
    by_contributor: Mapping[str, Evidence]

    @property
    def shrinkage(self) -> float:
        """The prior's share of θ̃: ``k/(k + P')``."""
        return self.prior / (self.prior + self.evidence.eff_p)

    def apply(self, p: float) -> float:
        return min(1.0, self.ratio * p)


def _evidence(rows: Sequence[tuple[float, float, int]]) -> Evidence:
    """``rows``: ``(p, π, y)`` of unique documents (π = 0 for unsampled)."""
    judged = [(p, 1.0 / pi, y) for p, pi, y in rows if pi > 0]
    total = math.fsum(w for _, w, _ in judged)
    squares = math.fsum(w * w for _, w, _ in judged)
    scale = total / squares if squares > 0 else 0.0  # w' = w n_e / Σ w
    return Evidence(
        documents=len(rows),
        sum_p=math.fsum(r[0] for r in rows),
        judged=len(judged),
        judged_relevant=sum(y for _, _, y in judged),
        weighted_relevant=math.fsum(w * y for _, w, y in judged),
        weighted_p=math.fsum(w * p for p, w, _ in judged),
        eff_relevant=scale * math.fsum(w * y for _, w, y in judged),
        eff_p=scale * math.fsum(w * p for p, w, _ in judged),
    )


def calibration_estimate(
    *,
    unique: Mapping[str, Mapping[str, str]],
    probs: Mapping[str, Mapping[str, float]],
    judged: Mapping[str, TopicPrels],
    level: int = 1,
    prior: float = PRIOR,
) -> Calibration:
    """θ̃ from the unique documents (module docstring). ``probs``: the cross-fitted p
    (topics without are skipped: nothing to calibrate there); ``judged``: the pool's
    sample (π of the drawn documents)."""
    if not prior > 0:
        raise OutsidePoolError(f"the prior's strength must be > 0, got {prior}")
    rows: dict[str, list[tuple[float, float, int]]] = {}
    for qid, docs in unique.items():
        p_of = probs.get(qid)
        if not p_of:
            continue
        topic = judged.get(qid)
        for docno, who in docs.items():
            pi = topic.inclusion_prob.get(docno, 0.0) if topic else 0.0
            y = int(topic.rel.get(docno, 0) >= level) if topic and pi > 0 else 0
            rows.setdefault(who, []).append((p_of.get(docno, 0.0), pi, y))
    everything = _evidence([r for group in rows.values() for r in group])
    shape = prior + everything.eff_relevant
    rate = prior + everything.eff_p
    return Calibration(
        ratio=shape / rate,
        var=shape / (rate * rate),
        prior=prior,
        evidence=everything,
        by_contributor={who: _evidence(r) for who, r in sorted(rows.items())},
    )


@dataclass(frozen=True)
class TopicUncertainty:
    """The model's error on one topic's unpooled documents of a run (AP), as the
    figures that widen the run's interval: a result record, not an exception."""

    qid: str
    var_documents: float  # Σ a² q (1 - q)
    slope: float  # Σ a p = ∂AP̂/∂θ
    documents: int
    expected_relevant: float  # Σ q


def y_hats(sample: TopicSample, ranking: Sequence[str]) -> list[float]:
    """ŷ down the list, as the estimator computes it."""
    out = []
    for docno in ranking:
        unit = sample.units.get(docno)
        p = sample.probs.get(docno, 0.0)
        out.append(p if unit is None else p + unit.resid * unit.weight)
    return out


def ap_slopes(sample: TopicSample, ranking: Sequence[str], ap: float) -> list[float]:
    """``a_d = (ĉ_d + Σ_{r > r_d} ŷ/r - AP̂)/R̂`` of every document of the list."""
    r = sample.est_r
    if not r > 0:
        return [0.0] * len(ranking)
    ys = y_hats(sample, ranking)
    total = math.fsum(y / rank for rank, y in enumerate(ys, 1))
    out, sp, upto = [], 0.0, 0.0
    for rank, y in enumerate(ys, 1):
        c_hat = (1.0 + sp) / rank
        sp += y
        upto += y / rank
        out.append((c_hat + total - upto - ap) / r)
    return out


# One topic's top-up plan: a_d, q_d and the top-up distribution of its unpooled
# documents (same order), for :func:`draws_for_width`.
Plan = tuple[list[float], list[float], dict[str, float]]


def topic_error(
    sample: TopicSample,
    ranking: Sequence[str],
    *,
    raw: Mapping[str, float],
    ap: float,
    calibration: Calibration,
) -> tuple[TopicUncertainty, Plan]:
    """The model's error on the documents of ``raw`` (unpooled, not judged: docno ->
    uncalibrated p) in one topic's list (``sample`` holds their calibrated q), and
    the topic's top-up plan."""
    var = slope = expected = 0.0
    count = 0
    slopes = dict(zip(ranking, ap_slopes(sample, ranking, ap), strict=True))
    dist = top_up_distribution(ranking, [d for d in raw if d not in sample.units])
    for docno in dist:
        a, q = slopes[docno], sample.probs.get(docno, 0.0)
        count += 1
        expected += q
        var += a * a * q * (1.0 - q)
        if calibration.ratio * raw[docno] < 1.0:
            slope += a * raw[docno]
    plan = ([slopes[d] for d in dist], [sample.probs.get(d, 0.0) for d in dist], dist)
    return TopicUncertainty(sample.qid, var, slope, count, expected), plan


@dataclass(frozen=True)
class RunInterval:
    """A run's MAP with the sampling variance of its pooled part and the model's
    error on its unpooled documents (per document, and through θ)."""

    estimate: float
    var_sampling: float
    var_documents: float
    var_calibration: float
    n_topics: int
    documents: int  # unpooled documents counted with q alone
    expected_relevant: float  # Σ q over them
    other: float | None = None  # the estimate's other value (run_intervals.run_other)

    @property
    def var(self) -> float:
        return self.var_sampling + self.var_documents + self.var_calibration

    @property
    def var_model(self) -> float:
        return self.var_documents + self.var_calibration

    @property
    def ci95(self) -> tuple[float, float]:
        if not self.var >= 0 or math.isnan(self.estimate):
            return (NAN, NAN)
        low, high = spanned(self.estimate, self.other, self.var)
        return (max(low, 0.0), min(high, 1.0))

    @property
    def span(self) -> float:
        """How far the interval reaches past ``estimate ± 1.96 sqrt(V)`` on one side,
        to span the estimate without the ratio correction on floored topics."""
        if self.other is None or math.isnan(self.other):
            return 0.0
        return abs(self.other - self.estimate)

    @property
    def model_share(self) -> float:
        """The model's share of the interval's variance (0 without unpooled ones)."""
        return self.var_model / self.var if self.var > 0 else 0.0

    @property
    def half_widths(self) -> tuple[float, float]:
        """``1.96 sqrt(V)`` of the sampling part and of the model part alone."""
        return (
            Z_95 * math.sqrt(max(self.var_sampling, 0.0)),
            Z_95 * math.sqrt(max(self.var_model, 0.0)),
        )


def run_interval(
    estimate: RunEstimate,
    errors: Mapping[str, TopicUncertainty],
    calibration: Calibration,
) -> RunInterval:
    """:class:`RunInterval` over the estimate's topics (``errors`` by qid; a topic
    without is one without unpooled documents counted by q alone). A topic's
    variance stays within the bounded estimator's 1/4, the run's within 1/4 too."""
    n = estimate.n_topics
    if n == 0:
        return RunInterval(NAN, NAN, 0.0, 0.0, 0, 0, 0.0)
    docs = slope = 0.0
    count, expected = 0, 0.0
    for topic in estimate.topics:
        error = errors.get(topic.qid)
        if error is None:
            continue
        docs += min(error.var_documents, max(BOUNDED_VAR - topic.var, 0.0))
        slope += error.slope
        count += error.documents
        expected += error.expected_relevant
    var_docs = docs / (n * n)
    var_cal = min((slope / n) ** 2 * calibration.var, BOUNDED_VAR)
    return RunInterval(
        estimate.estimate,
        estimate.var,
        var_docs,
        var_cal,
        n,
        count,
        expected,
        run_other(estimate.topics),
    )


def top_up_distribution(
    ranking: Sequence[str], unpooled: Iterable[str]
) -> dict[str, float]:
    """The AP-prior weights of the ranks of the run's list (cut at the pool depth),
    kept for its unpooled documents and renormalised to sum to 1."""
    wanted = set(unpooled)
    weights = ap_prior_weights(len(ranking)) if ranking else []
    kept = {d: w for d, w in zip(ranking, weights, strict=True) if d in wanted}
    total = math.fsum(kept.values())
    return {d: w / total for d, w in kept.items()} if total > 0 else {}


def top_up_draw(
    ranking: Sequence[str], unpooled: Iterable[str], draws: int, rng: random.Random
) -> StatapDraw | None:
    """``draws`` draws with replacement from :func:`top_up_distribution` (exact π;
    at most ``draws`` distinct documents); None when the list has no unpooled one."""
    distribution = top_up_distribution(ranking, unpooled)
    if not distribution:
        return None
    return draw_statap(distribution, draws, rng, stop="draws")


def top_up_prels(
    pooled: Mapping[str, TopicPrels],
    top_up: Mapping[str, Mapping[str, tuple[int, float]]],
) -> dict[str, TopicPrels]:
    """The pool's sample with each topic's judged top-up documents (``{qid: {docno:
    (rel, π)}}``) added as a second stratum (its own π, variance factor
    ``(1 - π)/π²``)."""
    out = dict(pooled)
    for qid, docs in top_up.items():
        base = pooled.get(qid)
        if base is None or not docs:
            continue
        clash = set(docs) & set(base.rel)
        if clash:
            raise OutsidePoolError(
                f"topic {qid}: document {min(clash)} is in the pool's sample and the "
                "top-up"
            )
        rel = {**base.rel, **{d: r for d, (r, _) in docs.items()}}
        pis = {**base.inclusion_prob, **{d: pi for d, (_, pi) in docs.items()}}
        weights = dict(base.var_weight)
        if weights:
            weights.update({d: (1 - pi) / (pi * pi) for d, (_, pi) in docs.items()})
        out[qid] = replace(
            base,
            rel=rel,
            inclusion_prob=pis,
            var_weight=weights,
            n_sampled=base.n_sampled + len(docs),
            neu=base.neu + len(docs),
        )
    return out


def anticipated_top_up_var(
    draws: int, topics: Mapping[str, Plan]
) -> tuple[float, float]:
    """``(Σ_t Σ_d a_d² q_d (1 - q_d) (1 - π_d)/π_d, expected distinct documents per
    topic)`` for ``draws`` top-up draws per topic: the model's anticipation of the
    design variance of the top-up's residual correction (E[(y - q)²] = q (1 - q)).
    ``topics``: ``qid -> (a_d, q_d, distribution)`` of the unpooled documents in
    distribution order."""
    total, distinct = 0.0, 0.0
    for slopes, qs, dist in topics.values():
        for a, q, w in zip(slopes, qs, dist.values(), strict=True):
            pi = -math.expm1(draws * math.log1p(-w)) if w < 1 else 1.0
            distinct += pi
            if pi > 0:
                total += a * a * q * (1.0 - q) * (1.0 - pi) / pi
    return total, distinct / len(topics) if topics else 0.0


def draws_for_width(
    half_width: float,
    var_sampling: float,
    n_topics: int,
    topics: Mapping[str, Plan],
    *,
    most: int = 1000,
) -> tuple[int, float] | None:
    """The fewest top-up draws per topic (and the documents they are expected to
    judge per topic) whose anticipated interval is at most ``± half_width``; None
    when even ``most`` draws, or the pooled part alone, are wider."""
    if n_topics == 0 or Z_95 * math.sqrt(max(var_sampling, 0.0)) > half_width:
        return None

    def fits(k: int) -> tuple[bool, float]:
        extra, distinct = anticipated_top_up_var(k, topics)
        return Z_95 * math.sqrt(var_sampling + extra / n_topics**2) <= half_width, (
            distinct
        )

    if not fits(most)[0]:
        return None
    low, high = 0, most
    while high - low > 1:
        mid = (low + high) // 2
        if fits(mid)[0]:
            high = mid
        else:
            low = mid
    return high, fits(high)[1]
