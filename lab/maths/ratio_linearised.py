"""AP linearised as a whole ratio around the model's own AP (measured, not adopted).

statAP's AP of a list is a ratio ``N/R``: ``N = Σ_L y_d c_d`` (``c_d`` the precision
at d's rank) and ``R = Σ_P y``. The difference estimators ``N̂`` and ``R̂`` (labels
``ŷ = p + 1[d ∈ S](y - p)/π``) are unbiased for N and R for a fixed p (N to the
design's joint inclusions), but their ratio is not: its bias, ``(AP V(R̂) - C(N̂,
R̂))/R²`` to second order, is large exactly where R̂'s coefficient of variation is,
and Beale's correction of it only holds where that CV is below 1.

This estimator expands the ratio not at the sample's ``(N̂, R̂)`` but at the model's
``(N_p, R_p)`` (N and R computed with ``y = p``, fixed given p), and keeps the first
order term only:

    AP_lin = AP_p + ((N̂ - N_p) - AP_p (R̂ - R_p)) / R_p,   AP_p = N_p / R_p.

It is linear in the unbiased N̂ and R̂ with fixed coefficients, so
``E[AP_lin] = AP_p + (N - AP_p R)/R_p = AP + (AP - AP_p)(R - R_p)/R_p``: its bias is
the product of the model's error on AP and its relative error on R, not a function of
the sample's skew. With p = y it is exact (``N̂ = N_p = N``, ``R̂ = R_p = R``);
with p ≡ 0 there is no expansion point and the topic keeps the estimator's own value.
For any fixed ``(AP~, R~)``, ``AP~ + (N̂ - AP~ R̂)/R~`` has expectation
``AP + (AP - AP~)(R - R~)/R~``. ``floor``: ``R~ = max(R_p, m)``, m the relevant
documents judged (no longer fixed given p; the bias formula then holds only
approximately). ``calibrated``: ``R~ = κ_{-t} R_p``, the model's count scaled by how
far it is off on the other topics (``Σ R̂ / Σ R_p`` over them): topics are sampled
independently, so R~ is still fixed given this topic's sample and the bias formula
holds exactly, with the R factor shrunk wherever the model's miscount is common to
the topics. ``moved``: ``AP~ = AP_p + δ_{-t}``, the model's AP moved by how far it
falls from the estimator's on the other topics of the run (fixed given this topic's
sample too): both factors of the bias shrink to what is particular to the topic.
Variance: the same linearisation, ``Σ_S v (y - p)² a_d²`` with
``a_d = (∂N/∂y_d - AP_p)/R_p``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from nuggets_app.ir.model_assisted import TopicSample
from nuggets_app.ir.prels import ranking_order
from nuggets_app.ir.run_intervals import BOUNDED_VAR, interval95


def _numerator(sample: TopicSample, ranking: Sequence[str], *, labelled: bool):
    """``(N, hits)`` of the list with ``ŷ`` (``labelled``) or with ``y = p``; hits:
    per sampled document in the list, its unit and ``∂N/∂y_d`` (without the part
    from documents ranked below it, added by the caller)."""
    sp = num = tail = 0.0
    hits = []
    for rank, docno in enumerate(ranking, 1):
        p = sample.probs.get(docno, 0.0)
        unit = sample.units.get(docno)
        y_hat = p if unit is None or not labelled else p + unit.resid * unit.weight
        c_hat = (1.0 + sp) / rank
        num += y_hat * c_hat
        sp += y_hat
        tail += y_hat / rank
        if unit is not None:
            hits.append((unit, c_hat, tail))
    return num, tail, hits


def raw_r(sample: TopicSample) -> float:
    """The difference estimate of R, not floored: ``Σ_P p + Σ_S (y - p)/π``."""
    return math.fsum(sample.probs.values()) + math.fsum(
        u.resid * u.weight for u in sample.units.values()
    )


def calibrations(samples: Mapping[str, TopicSample]) -> dict[str, float]:
    """Per topic, ``κ_{-t} = Σ_{u ≠ t} R̂_u / Σ_{u ≠ t} R_p,u``: how far the model's
    count of relevant documents is off on the other topics, whose samples are
    independent of this one's (1 where the others give nothing)."""
    r_hat = {q: raw_r(s) for q, s in samples.items()}
    r_p = {q: math.fsum(s.probs.values()) for q, s in samples.items()}
    all_hat, all_p = math.fsum(r_hat.values()), math.fsum(r_p.values())
    out = {}
    for q in samples:
        rest_hat, rest_p = all_hat - r_hat[q], all_p - r_p[q]
        out[q] = rest_hat / rest_p if rest_p > 0 and rest_hat > 0 else 1.0
    return out


def ap_shifts(
    estimates: Mapping[str, float], model: Mapping[str, float]
) -> dict[str, float]:
    """Per topic of one run, ``mean_{u ≠ t} (AP̂_u - AP_p,u)``: how far the model's AP
    is off on the other topics by the estimator's own estimates there (0 with no other
    topic). Fixed given topic t's sample, so it moves the expansion point only."""
    gaps = {q: estimates[q] - model[q] for q in estimates if q in model}
    total, n = math.fsum(gaps.values()), len(gaps)
    return {q: (total - gap) / (n - 1) if n > 1 else 0.0 for q, gap in gaps.items()}


def linearised_ap(
    sample: TopicSample,
    ranking: Sequence[str],
    *,
    floor: bool = False,
    scale: float = 1.0,
    shift: float = 0.0,
) -> tuple[float, float] | None:
    """``(AP_lin, its variance)`` of one list, or None where the model gives no
    expansion point (``R_p = 0``). ``scale``: ``R~ = scale R_p`` (a calibration
    fixed given this topic's sample, :func:`calibrations`); ``shift``: ``AP~ = AP_p +
    shift`` (likewise fixed, :func:`ap_shifts`)."""
    r_model = math.fsum(sample.probs.values())
    r_p = scale * r_model
    r_p = max(r_p, float(sample.n_relevant)) if floor else r_p
    if r_p <= 0 or r_model <= 0:
        return None
    n_p, _, _ = _numerator(sample, ranking, labelled=False)
    n_hat, tail, hits = _numerator(sample, ranking, labelled=True)
    r_hat = raw_r(sample)
    ap_p = n_p / r_model + shift  # the model's own AP, moved by ``shift``
    # AP_p + (N̂ - AP_p R̂)/R̃: linear in (N̂, R̂) with coefficients fixed given p.
    value = ap_p + (n_hat - ap_p * r_hat) / r_p
    var = listed = 0.0
    for unit, c_hat, upto in hits:
        share = unit.var_w * unit.resid * unit.resid
        listed += share
        a = (c_hat + tail - upto - ap_p) / r_p
        var += share * a * a
    var += max(sample.var_r - listed, 0.0) * (ap_p / r_p) ** 2
    return value, var


def model_only(sample: TopicSample) -> TopicSample:
    """The sample without its judged documents: its AP is the model's own."""
    return replace(sample, units={})


def linearised_runs(
    found: dict,
    samples: Mapping[str, TopicSample],
    runs,
    *,
    floor: bool = False,
    calibrated: bool = False,
    clip: bool = True,
    moved: bool = False,
):
    """``found`` (``run -> measure -> RunEstimate`` of
    :func:`~nuggets_app.ir.model_assisted.model_assisted_evaluate`) with each topic's AP
    replaced by :func:`linearised_ap` (clipped to [0, 1] unless ``clip`` is false; variance the larger of its
    own and the estimator's, so the interval keeps the estimator's protections, capped
    at 1/4 as the estimator's is), the
    run's mean, variance and interval (``± 1.96 sd``, within [0, 1]) recomputed.
    ``calibrated``: each topic's ``R~`` is its ``R_p`` scaled by :func:`calibrations`.
    ``moved``: each topic's ``AP~`` moved by :func:`ap_shifts` of the estimator's
    per-topic AP in ``found``. ``clip`` false: topics are left unclipped and only the run's mean is kept in
    [0, 1] (the mean of unbiased terms stays unbiased; per-topic clipping does not)."""
    scales = calibrations(samples) if calibrated else {}
    for run, measures in found.items():
        ap = measures["AP"]
        topics = []
        orders = {t.qid: ranking_order(runs[run][t.qid]) for t in ap.topics}
        shifts: dict[str, float] = {}
        if moved:
            model = {}
            for q, order in orders.items():
                own = linearised_ap(model_only(samples[q]), order)
                if own is not None:
                    model[q] = own[0]
            shifts = ap_shifts({t.qid: t.estimate for t in ap.topics}, model)
        for t in ap.topics:
            got = linearised_ap(
                samples[t.qid],
                orders[t.qid],
                floor=floor,
                scale=scales.get(t.qid, 1.0),
                shift=shifts.get(t.qid, 0.0),
            )
            if got is not None:
                value, var = got
                if clip:
                    value = min(max(value, 0.0), 1.0)
                t = replace(t, estimate=value, var=min(max(var, t.var), BOUNDED_VAR))
            topics.append(replace(t, other=None))
        n = len(topics)
        if not n:
            continue
        mean = min(max(math.fsum(t.estimate for t in topics) / n, 0.0), 1.0)
        var = math.fsum(t.var for t in topics) / (n * n)
        low, high = interval95(mean, var)
        measures["AP"] = replace(
            ap,
            estimate=mean,
            var=var,
            ci95=(max(low, 0.0), min(high, 1.0)),
            topics=tuple(topics),
        )
    return found
