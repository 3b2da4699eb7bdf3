"""Model-assisted (difference) estimates of statAP's measures: the default estimator.

Derivation and worked example: docs/explanation/model-assisted.md. A topic's pool P
was sampled by statAP's design (sample S, inclusion probabilities π); a relevance model
gives every pooled document a probability p fitted without its label (the caller's
duty). Every Horvitz-Thompson sum
``Σ_S y/π`` of statAP becomes the difference estimator ``Σ_P p + Σ_S (y - p)/π``, i.e.
each label y_d is replaced by ``ŷ_d = p_d + 1[d ∈ S] (y_d - p_d)/π_d`` (E[ŷ_d] = y_d)
and the measure is computed from the ŷ of the run's list L (ranks r_d):

measures as statAP defines them from ŷ (AP, R-prec, P@k, nDCG@k with an ideal DCG
from difference estimates of the counts per grade).

With p ≡ 0 these are statAP's R̂, statAP, statRprec and statP@k exactly; with p = y
they are exact for every sample. R̂, SP̂ and P@k̂ are unbiased for any fixed p.

The estimator's options are one value, :class:`nuggets_app.ir.estimator.Estimator`,
passed whole (``estimator``, default :data:`~nuggets_app.ir.estimator.REPORTED`, what
the application reports): its ``tuning`` scales each topic's p to ``λ p``
(:func:`~nuggets_app.ir.estimator.power_tuning`); its ``bounded``, ``beale`` and
``interval`` are described below.

Variance (linearisation, Poisson approximation of the design): with ``a_d`` the
derivative of the measure with respect to ``y_d`` at the estimates,
``V̂ = Σ_{d ∈ S} (1 - π_d)/π_d² · (a_d (y_d - p_d))²`` (graded: the residual of each
grade level); 95% interval ``estimate ± 1.96 sqrt(V̂)``; ``interval`` picks another
variance (:mod:`nuggets_app.ir.intervals`; the application's is ``sparse``). Topics:
every topic of the prels the run answers but ``UMASS`` ones, valid when ``R̂ > 0``.
Per run: mean over valid topics, ``var = Σ var_t / n²``. No Django here.

Beale's ratio estimator of AP (``beale``): ``(N̂ R̂ + Ĉ)/(R̂² + V̂_R)`` removes the
second-order ratio bias ``(AP V(R̂) - C(N̂, R̂))/R²`` of N̂/R̂ (Cochran 1977, §6.8),
with the linearised ``Ĉ = Σ_S v (y - p)² ∂N/∂y_d`` and ``V̂_R``. The expansion of 1/R̂
converges only for ``|R̂ - R| < R``; where it applies is a rule
(:mod:`nuggets_app.ir.beale`): the application's (:func:`~nuggets_app.ir.beale.
beale_span`) corrects every topic, and where R̂ was floored its interval also spans
the uncorrected ratio N̂/m.

``bounded`` (what the application reports; :func:`topic_bounded`): a topic's
AP, R-prec, P@k and nDCG@k are clipped to [0, 1], their variance capped at 1/4
(Popoviciu), and R̂ floored at the relevant documents judged: the truth lies inside
both ranges. Unbounded (:data:`~nuggets_app.ir.estimator.PLAIN`) keeps statAP's own
values at p ≡ 0.
Derivations: docs/explanation/model-assisted.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise
from typing import NamedTuple

from nuggets_app.errors import DomainError
from nuggets_app.ir.estimator import REPORTED, Estimator
from nuggets_app.ir.intervals import (
    MODEL_ONLY_VAR,
    anticipated_vars,
    uses_anticipated,
    uses_model_only_bound,
)
from nuggets_app.ir.prels import TopicPrels, ranking_order, topic_key
from nuggets_app.ir.run_intervals import (
    NAN,
    RunEstimate,
    TopicEstimate,
    bounded_ci,
    run_estimate,
    topic_bounded,
)

DEFAULT_ESTIMATOR = "model_assisted"
ESTIMATORS = ("sample_only", "statap", "eap", "model_assisted")
CUTOFF = 30  # statAP's P@30 and nDCG@30

Probs = Mapping[str, Mapping[str, float]]  # qid -> docno -> p
Runs = Mapping[str, Mapping[str, Mapping[str, float]]]  # run -> qid -> docno -> score


class ModelAssistedError(DomainError):
    """Bad input to the model-assisted estimator; the message names it."""


def measure_names(cutoff: int = CUTOFF) -> tuple[str, ...]:
    """The measures estimated per topic, in report order."""
    return ("AP", "Rprec", f"P@{cutoff}", f"nDCG@{cutoff}", "R")


@dataclass(frozen=True)
class GradeModel:
    """Graded relevance for nDCG.

    ``at_least[qid][docno][g - 1] = P(grade >= g)`` for g = 1..G (non-increasing, as
    :class:`nuggets_app.ir.graded.Ordinal` holds it; a missing document has 0) and
    ``gains[g]`` for g = 0..G, non-decreasing with ``gains[0] = 0``. A judged
    document's grade is its prels ``rel`` clipped to 0..G.
    """

    at_least: Mapping[str, Mapping[str, Sequence[float]]]
    gains: Sequence[float]


class _Unit(NamedTuple):
    """A sampled document's run-independent terms."""

    weight: float  # 1/π
    resid: float  # y - p
    var_w: float  # (1 - π)/π²
    gain_resid: float  # gain - expected gain
    ideal: float  # its derivative of IDCĜ (times its residuals)


@dataclass(frozen=True)
class TopicSample:
    """Run-independent parts of one topic (built once, used for every run), prepared
    for ``estimator``, whose options its estimates follow."""

    qid: str
    label: str
    cutoff: int
    probs: Mapping[str, float]
    exp_gain: Mapping[str, float]
    units: Mapping[str, _Unit]
    est_r: float
    var_r: float  # Σ_S var_w resid², the variance of R̂
    idcg: float
    ideal_var: float  # Σ_S var_w ideal²
    scale: float = 1.0  # λ of the estimator's tuning (1: p as given)
    design: Mapping[str, float] = field(default_factory=dict)  # π of pooled documents
    n_relevant: int = 0  # sampled documents judged relevant
    expected_relevant: float = 0.0  # Σ_S p, the model's count of relevant in S
    floored: bool = False  # R̂ was raised to the relevant documents judged
    estimator: Estimator = REPORTED


@lru_cache(maxsize=64)
def _discounts(cutoff: int) -> tuple[float, ...]:
    """``1/log2(r + 1)`` for r = 1..cutoff (index r - 1)."""
    return tuple(1.0 / math.log2(r + 1) for r in range(1, cutoff + 1))


def ideal_capacity(count: float, cutoff: int) -> tuple[float, float]:
    """``(D(x), D'(x))``: the discount mass of the first ``x`` ranks, the last one
    fractional, capped at ``cutoff``; 0 for ``x <= 0``."""
    disc = _discounts(cutoff)
    if count <= 0:
        return 0.0, 0.0
    if count >= cutoff:
        return math.fsum(disc), 0.0
    whole = int(count)
    return math.fsum(disc[:whole]) + (count - whole) * disc[whole], disc[whole]


def _grade_model(
    qid: str, probs: Mapping[str, float], grades: GradeModel | None
) -> tuple[Mapping[str, Sequence[float]], tuple[float, ...]]:
    if grades is None:
        return {d: (p,) for d, p in probs.items()}, (0.0, 1.0)
    gains = tuple(float(g) for g in grades.gains)
    if len(gains) < 2 or gains[0] != 0 or any(b < a for a, b in pairwise(gains)):
        raise ModelAssistedError(f"gains must start at 0 and not decrease: {gains}")
    at_least = grades.at_least.get(qid, {})
    for docno, levels in at_least.items():
        bad = len(levels) != len(gains) - 1 or any(
            not 0 <= b <= a <= 1 for a, b in pairwise((1.0, *levels))
        )
        if bad:
            raise ModelAssistedError(
                f"topic {qid}: {docno} needs {len(gains) - 1} non-increasing "
                f"probabilities in [0, 1], got {list(levels)}"
            )
    return at_least, gains


def _expected_gain(steps: Sequence[float], at_least: Sequence[float]) -> float:
    """``Σ_g (gain_g - gain_{g-1}) P(grade >= g)``."""
    return math.fsum(s * q for s, q in zip(steps, at_least, strict=True))


def _inputs_check(
    qid: str,
    probs: Mapping[str, float],
    unsampled: Mapping[str, float],
    *,
    cutoff: int,
    graded: bool,
) -> None:
    """:func:`topic_sample`'s refusals: a cutoff below 1, unsampled documents with
    graded relevance, a p outside [0, 1]."""
    if cutoff < 1:
        raise ModelAssistedError(f"cutoff must be >= 1, got {cutoff}")
    if unsampled and graded:
        raise ModelAssistedError("unsampled documents are for binary relevance only")
    for docno, p in (*probs.items(), *unsampled.items()):
        if not 0.0 <= p <= 1.0:
            raise ModelAssistedError(f"topic {qid}: p({docno}) = {p} not in [0,1]")


def topic_sample(
    judged: TopicPrels,
    probs: Mapping[str, float],
    *,
    estimator: Estimator = REPORTED,
    level: int = 1,
    cutoff: int = CUTOFF,
    grades: GradeModel | None = None,
    unsampled: Mapping[str, float] | None = None,
    design: Mapping[str, float] | None = None,
) -> TopicSample:
    """Prepare one topic for ``estimator``: ``R̂``, its variance, the ideal DCG and
    per-document terms.

    ``probs`` gives p for every pooled document (sampled ones included, predicted
    without their own label); a document without p has p = 0. Binary labels are
    ``rel >= level``. A judged document with ``π = 0`` is not a sampled unit (it has no
    weight) and is ignored. The estimator's ``tuning`` scales p by its ``λ`` (graded:
    every ``P(grade >= g)``); without one the estimates are exactly unbiased for the
    given p, with it approximately (``λ`` is estimated from the sample).

    ``unsampled``: p of documents outside the sampled pool (a new run's unpooled
    documents, π = 0), binary only. They enter ``R̂`` and the lists with ``ŷ = p`` and
    are never scaled by ``λ``: no residual corrects them, so the calibrated p is their
    best prediction, while ``λ`` only trades variance within the sampled pool (a
    document of ``probs`` keeps its pooled p). ``design``: π of every pooled
    document, drawn or not (the ``anticipated`` interval of :mod:`.intervals`).
    The estimator's ``bounded``: R̂ is at least the number of relevant documents judged.
    """
    unsampled = unsampled or {}
    _inputs_check(
        judged.qid, probs, unsampled, cutoff=cutoff, graded=grades is not None
    )
    tuning = estimator.tuning
    scale = tuning(judged, probs, level=level) if tuning is not None else 1.0
    if scale != 1.0:
        probs = {d: scale * p for d, p in probs.items()}
    if unsampled:
        probs = {**unsampled, **probs}
    at_least, gains = _grade_model(judged.qid, probs, grades)
    if grades is not None and scale != 1.0:
        at_least = {d: [scale * q for q in lv] for d, lv in at_least.items()}
    top = len(gains) - 1
    steps = [gains[g] - gains[g - 1] for g in range(1, top + 1)]
    none = (0.0,) * top
    sampled = [
        (d, pi, rel, max(0, min(rel, top)) if grades is not None else int(rel >= level))
        for d, rel in judged.rel.items()
        if (pi := judged.inclusion_prob[d]) > 0
    ]
    # Ĉ_g = Σ_P P(grade >= g) + Σ_S (1[grade >= g] - P(grade >= g))/π
    counts = [math.fsum(lv[g] for lv in at_least.values()) for g in range(top)]
    for d, pi, _, grade in sampled:
        lv = at_least.get(d, none)
        for g in range(top):
            counts[g] += (float(grade > g) - lv[g]) / pi
    capacity = [ideal_capacity(c, cutoff) for c in counts]
    idcg = math.fsum(s * cap for s, (cap, _) in zip(steps, capacity, strict=True))
    slope = [s * deriv for s, (_, deriv) in zip(steps, capacity, strict=True)]
    units: dict[str, _Unit] = {}
    for d, pi, rel, grade in sampled:
        lv = at_least.get(d, none)
        units[d] = _Unit(
            weight=1.0 / pi,
            resid=float(rel >= level) - probs.get(d, 0.0),
            var_w=judged.var_weight.get(d, (1.0 - pi) / (pi * pi)),
            gain_resid=gains[grade] - _expected_gain(steps, lv),
            ideal=math.fsum(slope[g] * (float(grade > g) - lv[g]) for g in range(top)),
        )
    n_relevant = sum(int(rel >= level) for _, _, rel, _ in sampled)
    est_r = math.fsum(probs.values()) + math.fsum(
        u.resid * u.weight for u in units.values()
    )
    floored = estimator.bounded and est_r < n_relevant
    if floored:  # R is at least the relevant documents judged
        est_r = float(n_relevant)
    exp_gain: Mapping[str, float] = probs
    if grades is not None:
        exp_gain = {d: _expected_gain(steps, lv) for d, lv in at_least.items()}
    return TopicSample(
        qid=judged.qid,
        label=judged.label,
        cutoff=cutoff,
        probs=probs,
        exp_gain=exp_gain,
        units=units,
        est_r=est_r,
        var_r=math.fsum(u.var_w * u.resid * u.resid for u in units.values()),
        idcg=idcg,
        ideal_var=math.fsum(u.var_w * u.ideal * u.ideal for u in units.values()),
        scale=scale,
        design={**design, **{d: pi for d, pi, *_ in sampled}} if design else {},
        n_relevant=n_relevant,
        floored=floored,
        expected_relevant=math.fsum(probs.get(d, 0.0) for d, *_ in sampled),
        estimator=estimator,
    )


class _Walk(NamedTuple):
    """Sums of one pass down a list."""

    sp: float  # SP̂ of the whole list
    num: float  # Σ_L ŷ ĉ, the AP numerator
    dcg: float  # DCĜ@k
    tail: float  # Σ_L ŷ_d / r_d
    p_k: float  # SP̂(k)/k
    rp_rank: int  # R̂r if the list reaches it, else 0 (the fallback SP̂/R̂)
    rp_sum: float  # SP̂(R̂r)
    hits: list[tuple[_Unit, float, float, int]]  # sampled: (unit, ĉ, Σ_{<= r} ŷ/r, r)
    y_hat: list[float]  # ŷ down the list


def _walk(sample: TopicSample, ranking: Sequence[str]) -> _Walk:
    k = sample.cutoff
    disc = _discounts(k)
    rounded = int(sample.est_r + 0.5)
    probs, units, exp_gain = sample.probs, sample.units, sample.exp_gain
    sp = num = dcg = tail = rp_sum = 0.0
    p_k: float | None = None
    rp_rank = 0
    hits: list[tuple[_Unit, float, float, int]] = []
    y_hats: list[float] = []
    for rank, docno in enumerate(ranking, 1):
        p = probs.get(docno, 0.0)
        unit = units.get(docno)
        y_hat = p if unit is None else p + unit.resid * unit.weight
        c_hat = (1.0 + sp) / rank
        num += y_hat * c_hat
        sp += y_hat
        y_hats.append(y_hat)
        tail += y_hat / rank
        if rank <= k:
            gain = exp_gain.get(docno, 0.0)
            if unit is not None:
                gain += unit.gain_resid * unit.weight
            dcg += gain * disc[rank - 1]
        if unit is not None:
            hits.append((unit, c_hat, tail, rank))
        if rank == k:
            p_k = sp / k
        if rank == rounded:
            rp_rank, rp_sum = rank, sp
    p_k = sp / k if p_k is None else p_k
    return _Walk(sp, num, dcg, tail, p_k, rp_rank, rp_sum, hits, y_hats)


def topic_estimates(
    sample: TopicSample, ranking: Sequence[str]
) -> dict[str, TopicEstimate]:
    """Every measure of one ranked list (best first, cut by the caller), by the
    estimator the sample was prepared for. O(|L|).

    AP and R-prec are NaN when ``R̂ <= 0`` (not a valid topic: the run means leave it
    out, as statAP does); P@k, nDCG@k and R are given for every sample. The
    estimator's ``beale``: where AP is Beale's ratio estimator (module docstring); its
    variance is the same linearisation. Its ``interval``: the variance of
    :mod:`nuggets_app.ir.intervals` (``anticipated``: AP, R-prec and P@k;
    ``model_only``: every measure but R). Its ``bounded``: through
    :func:`topic_bounded`.
    """
    estimator = sample.estimator
    interval = estimator.interval
    est_r, k, idcg = sample.est_r, sample.cutoff, sample.idcg
    r = est_r if est_r > 0 else NAN
    w = _walk(sample, ranking)
    # Divided as statAP divides (not multiplied by 1/R̂): p ≡ 0 agrees to rounding.
    ap = w.num / r
    rprec = w.rp_sum / w.rp_rank if w.rp_rank else w.sp / r
    ndcg = w.dcg / idcg if idcg > 0 else NAN
    # a_d: derivative of each measure in y_d (times the residual in z_d); sampled
    # documents outside the list enter through R̂ (AP, R-prec fallback) or IDCĜ.
    rp_in, rp_out = ((1.0 - rprec) / r, -rprec / r) if not w.rp_rank else (0, 0)
    var_ap = var_pk = var_rp = var_nd = listed = ideal_top = cov_nr = 0.0
    for unit, c_hat, upto, rank in w.hits:
        share = unit.var_w * unit.resid * unit.resid
        listed += share
        d_num = c_hat + w.tail - upto  # ∂N/∂y_d; ∂R/∂y_d = 1
        cov_nr += share * d_num
        a_ap = (d_num - ap) / r
        var_ap += share * a_ap * a_ap
        if not w.rp_rank:
            var_rp += share * rp_in * rp_in
        elif rank <= w.rp_rank:
            var_rp += share / (w.rp_rank * w.rp_rank)
        if rank <= k:
            var_pk += share / (k * k)
            z = unit.gain_resid * _discounts(k)[rank - 1] - ndcg * unit.ideal
            var_nd += unit.var_w * z * z
            ideal_top += unit.var_w * unit.ideal * unit.ideal
    outside = max(sample.var_r - listed, 0.0)  # S outside the list: a_d from R̂ only
    if outside > 0:
        var_ap += outside * (ap / r) ** 2
        var_rp += outside * rp_out * rp_out
    var_nd += ndcg * ndcg * max(sample.ideal_var - ideal_top, 0.0)
    if uses_anticipated(interval, sample.n_relevant) and sample.design and r > 0:
        more = anticipated_vars(
            ranking[: len(w.y_hat)],
            w.y_hat,
            sample.probs,
            sample.design,
            est_r=r,
            ap=ap,
            cutoff=k,
            rp_rank=w.rp_rank,
        )
        var_ap, var_rp, var_pk = map(max, (var_ap, var_rp, var_pk), more)
    uncorrected = None
    rule = estimator.beale
    use = rule(r, sample.var_r, floored=sample.floored) if rule and r > 0 else None
    if use is not None and use.corrects:
        if use.spans:
            uncorrected = ap
        ap = (w.num * r + cov_nr) / (r * r + sample.var_r)
    values = (
        (ap, var_ap),
        (rprec, var_rp),
        (w.p_k, var_pk),
        (ndcg, var_nd / idcg / idcg if idcg > 0 else NAN),
        (est_r, sample.var_r),
    )
    alone = sample.n_relevant == 0
    bound = MODEL_ONLY_VAR if alone and uses_model_only_bound(interval) else 0.0
    found = {
        name: TopicEstimate(
            sample.qid,
            value,
            var if name == "R" else max(var, bound),
            est_r,
            alone,
            uncorrected if name == "AP" else None,
        )
        for name, (value, var) in zip(measure_names(k), values, strict=True)
    }
    return topic_bounded(found) if estimator.bounded else found


def topic_samples(
    judged: Mapping[str, TopicPrels],
    probs: Probs,
    *,
    estimator: Estimator = REPORTED,
    level: int = 1,
    cutoff: int = CUTOFF,
    grades: GradeModel | None = None,
    unsampled: Probs | None = None,
    design: Probs | None = None,
) -> dict[str, TopicSample]:
    """:func:`topic_sample` of every topic that has a statAP-sampled document (not
    ``UMASS``), in numeric topic order; a topic absent from ``probs`` gets p ≡ 0."""
    unsampled, design = unsampled or {}, design or {}
    return {
        qid: topic_sample(
            judged[qid],
            probs.get(qid, {}),
            estimator=estimator,
            level=level,
            cutoff=cutoff,
            grades=grades,
            unsampled=unsampled.get(qid),
            design=design.get(qid),
        )
        for qid in sorted(judged, key=topic_key)
        if judged[qid].label != "UMASS"
    }


def ranked(scores: Mapping[str, float], depth: int | None) -> list[str]:
    ranking = ranking_order(scores)
    return ranking if depth is None else ranking[:depth]


def model_assisted_evaluate(
    judged: Mapping[str, TopicPrels],
    probs: Probs,
    runs: Runs,
    *,
    estimator: Estimator = REPORTED,
    level: int = 1,
    cutoff: int = CUTOFF,
    grades: GradeModel | None = None,
    unsampled: Probs | None = None,
    design: Probs | None = None,
) -> dict[str, dict[str, RunEstimate]]:
    """``run -> measure -> RunEstimate`` for every run (``qid -> {docno: score}``) by
    ``estimator`` (default: what the application reports).

    Lists are ordered by :func:`ranking_order` (the caller cuts them to a depth).
    A topic is used when the run answers it, it is not ``UMASS`` and ``R̂ > 0``.
    Per-topic work is done once; each run costs O(|L| + |S|) per topic. The
    estimator's ``bounded``: per-topic estimates through :func:`topic_bounded`, R̂
    floored at the relevant documents judged, and the run's interval of every measure
    but ``R`` intersected with [0, 1]. ``unsampled``: p of documents outside the
    sampled pool, unscaled (:func:`topic_sample`). ``design``: the π of every pooled
    document the interval may use (``qid -> docno -> π``).
    """
    samples = topic_samples(
        judged,
        probs,
        estimator=estimator,
        level=level,
        cutoff=cutoff,
        grades=grades,
        unsampled=unsampled,
        design=design,
    )
    names = measure_names(cutoff)
    out: dict[str, dict[str, RunEstimate]] = {}
    for run in sorted(runs):
        per: dict[str, list[TopicEstimate]] = {m: [] for m in names}
        for qid, sample in samples.items():
            if qid not in runs[run] or not sample.est_r > 0:
                continue
            found = topic_estimates(sample, ranking_order(runs[run][qid]))
            for m, estimate in found.items():
                per[m].append(estimate)
        out[run] = {m: run_estimate(run, m, per[m]) for m in names}
        if estimator.bounded:
            out[run] = {m: bounded_ci(e) for m, e in out[run].items()}
    return out
