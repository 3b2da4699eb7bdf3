"""R̂ without the rare draws: the low-π band predicted by the calibrated model (a
synthetic estimator of small-area estimation; measured in docs/results/intervals.md and
not adopted).

The ratio's bias comes from pooled documents with a small π: most samples draw none of
their relevant ones and the rare sample that does weights it by ``1/π``. Here every
pooled document with ``0 < π < threshold`` leaves the design: a drawn one counts as its
label (π set to 1), an undrawn one as ``c p``, where ``c`` is the band's calibration
factor estimated from the *other* topics' samples (the Horvitz-Thompson count of their
relevant band documents over their band's Σ p), so that a topic's own sample stays
independent of it. R̂ then has no ``1/π`` jump and its ratio no convexity bias; what
remains is the model's error in ``c`` (common to every topic, so it does not average
out over topics) and in how p spreads the band's relevance over topics.

:func:`common_variance` is the first of these: the variance ``c`` has from the other
topics' samples, carried to a run's MAP by its derivative.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass

from nuggets_app.ir.prels import TopicPrels


@dataclass(frozen=True)
class Band:
    """One topic's inputs with its low band predicted, and what ``c`` rests on."""

    prels: dict[str, TopicPrels]
    probs: dict[str, dict[str, float]]
    unsampled: dict[str, dict[str, float]]
    design: dict[str, dict[str, float]]
    c_var: dict[str, float]  # the variance of the topic's c
    band_p: dict[str, float]  # the topic's Σ p over its band


def synthetic_band(
    prels: Mapping[str, TopicPrels],
    probs: Mapping[str, Mapping[str, float]],
    design: Mapping[str, Mapping[str, float]],
    *,
    level: int,
    threshold: float,
) -> Band:
    def low(pi: float) -> bool:
        return 0.0 < pi < threshold

    count, count_var, band_p = {}, {}, {}
    for qid, topic in prels.items():
        drawn = [
            (topic.inclusion_prob[d], float(rel >= level))
            for d, rel in topic.rel.items()
            if low(topic.inclusion_prob[d])
        ]
        count[qid] = sum(y / pi for pi, y in drawn)
        count_var[qid] = sum((1 - pi) / pi**2 * y for pi, y in drawn)
        p_of = probs.get(qid, {})
        band_p[qid] = sum(
            p_of.get(d, 0.0) for d, pi in design.get(qid, {}).items() if low(pi)
        )
    out = Band({}, {}, {}, {}, {}, band_p)
    for qid, topic in prels.items():
        # Summed afresh over the other topics: a difference of totals can leave a
        # rounding residue where the others hold nothing.
        n, v, others = (
            math.fsum(x for q, x in part.items() if q != qid)
            for part in (count, count_var, band_p)
        )
        c = n / others if others > 0 else 1.0
        out.c_var[qid] = v / others / others if others > 0 else 0.0
        kept = copy.deepcopy(topic)
        for docno in kept.rel:
            if low(kept.inclusion_prob[docno]):
                kept.inclusion_prob[docno] = 1.0
        out.prels[qid] = kept
        p_of, pis = probs.get(qid, {}), design.get(qid, {})
        predicted = {d for d, pi in pis.items() if low(pi) and d not in topic.rel}
        out.probs[qid] = {d: p for d, p in p_of.items() if d not in predicted}
        out.unsampled[qid] = {d: min(1.0, c * p_of.get(d, 0.0)) for d in predicted}
        out.design[qid] = {
            d: 1.0 if low(pi) else pi for d, pi in pis.items() if d not in predicted
        }
    return out


def common_variance(band: Band, topics) -> float:
    """The variance of a run's MAP from ``c``: ``(∂MAP/∂c)² V(c)`` with
    ``∂AP_t/∂c = -AP_t Σ_band p / R̂_t`` over the run's ``topics`` (TopicEstimates)."""
    topics = [t for t in topics if t.est_r > 0]
    if not topics:
        return 0.0
    n = len(topics)
    grad = -sum(t.estimate / t.est_r * band.band_p[t.qid] for t in topics) / n
    return grad * grad * sum(band.c_var[t.qid] for t in topics) / n
