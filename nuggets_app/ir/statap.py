"""statAP estimates exactly as NIST's ``statAP_MQ_eval_v3.pl`` computes them.

Specification: docs/reference/algorithms.md section 2. Judgments come from :mod:`nuggets_app.ir.prels`
(``qid -> TopicPrels``); a run is ``qid -> {docno: score}``. Per topic, with
``SP(r) = Σ_{relevant, rank<=r} 1/π``:

* ``R̂ = Σ_{stored d, rel>0} 1/π(d)`` (``estR``), ``R̂r = floor(R̂ + 0.5)``;
* ``statAP = (1/R̂) Σ_{relevant d in list} prec(r_d)/π(d)``,
  ``prec(r) = (1 + SP(r-1))/r`` (the document itself counts 1, not 1/π);
* ``statRprec = SP(R̂r)/R̂r``, or ``SP/R̂`` (unrounded) when the list is shorter;
* ``statP@30 = SP(30)/30``;
* ``statnDCG = DCG@30 / IDCG`` with raw grades (gain ``2^g - 1``) of sampled documents
  and the script's ideal list: ``min(h,30)`` documents of gain 3, then ranks
  ``h+1 .. min(a-h, 30)`` of gain 1 (``a`` relevant, ``h`` highly relevant samples);
* ``statAP_var = (A - B/(n_sampled - 1) + C)/R̂²`` (section 2.6), and the 95% interval
  ``statAP ± 1.96 sqrt(var)``.

Aggregates over valid topics (``R̂ > 0``): plain means, ``VAR_MAP = Σ var / n²``.
Nothing is clipped (statAP can exceed 1). A division by zero that kills the script
gives ``NaN`` here (one sampled document: variance; no valid topic: means).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from nuggets_app.ir.prels import TopicPrels, ranking_order, topic_key

P_CUTOFF = 30
NDCG_CUTOFF = 30
Z_95 = 1.96
NAN = float("nan")

Only = Literal["all", "neu", "mixed"]

MEASURES = (
    "statAP",
    "statRprec",
    "statP@30",
    "statnDCG",
    "estR",
    "statAP_var",
    "statAP_ci_low",
    "statAP_ci_high",
)


@dataclass(frozen=True)
class TopicStatap:
    """statAP figures of one topic; ``evaluated`` is False for skipped topics."""

    qid: str
    label: str
    evaluated: bool
    est_r: float = 0.0
    n_sampled: int = 0
    n_sampled_rel: int = 0
    sampled_in_list: int = 0
    sampled_rel_in_list: int = 0
    statap: float = NAN
    rprec: float = NAN
    p30: float = NAN
    ndcg: float = NAN
    var: float = NAN

    @property
    def valid(self) -> bool:
        """Evaluated and with at least one relevant document (``R̂ > 0``)."""
        return self.evaluated and self.est_r > 0

    @property
    def ci95(self) -> tuple[float, float]:
        """``statAP ± 1.96 sqrt(var)`` (NaN when the variance is undefined)."""
        return _ci(self.statap, self.var)


@dataclass(frozen=True)
class StatapSummary:
    """Means over valid topics (NaN when there is none) and ``VAR_MAP``."""

    valid_topics: int
    stat_map: float
    stat_mrp: float
    stat_mpc30: float
    stat_mndcg: float
    var_map: float
    mean_est_r: float

    @property
    def ci95(self) -> tuple[float, float]:
        """``statMAP ± 1.96 sqrt(VAR_MAP)``."""
        return _ci(self.stat_map, self.var_map)


@dataclass(frozen=True)
class StatapResult:
    """One run's evaluation: every registered topic the run retrieves for, in order."""

    name: str
    only: Only
    topics: tuple[TopicStatap, ...]
    summary: StatapSummary


def _ci(estimate: float, var: float) -> tuple[float, float]:
    if math.isnan(var) or var < 0:
        return (NAN, NAN)
    half = Z_95 * math.sqrt(var)
    return (estimate - half, estimate + half)


def _gain(grade: int) -> int:
    """The script's ``(1 << g) - 1``; Perl shifts right for negative g, giving -1."""
    return (1 << grade) - 1 if grade >= 0 else -1


def _discount(rank: int) -> float:
    # log(n)/log(2) rather than log2(n): the script's arithmetic, to the last bit.
    return math.log(rank + 1) / math.log(2)


def ndcg_normaliser(n_rel: int, n_high: int) -> float:
    """IDCG as the script computes it (docs/reference/algorithms.md 2.5, with its quirks)."""
    total = 0.0
    for rank in range(1, min(n_high, NDCG_CUTOFF) + 1):
        total += _gain(2) / _discount(rank)
    for rank in range(n_high + 1, min(n_rel - n_high, NDCG_CUTOFF) + 1):
        total += _gain(1) / _discount(rank)
    return total


def topic_statap(judged: TopicPrels, ranking: list[str], *, label: str) -> TopicStatap:
    """Estimate statAP, R-prec, P@30, nDCG and the variance for one topic.

    ``ranking`` is the run's list for the topic, best first, without duplicates.
    """
    est_r = judged.est_r
    common: dict[str, Any] = {
        "qid": judged.qid,
        "label": label,
        "evaluated": True,
        "est_r": est_r,
        "n_sampled": judged.n_sampled,
        "n_sampled_rel": judged.n_rel,
    }
    if est_r <= 0:
        return TopicStatap(**common)
    rounded = int(est_r + 0.5)
    sum_prec = up = dcg = 0.0
    p30 = rprec = None
    inlist = 0
    found: list[tuple[float, float, int]] = []  # (π, prec, rank) of relevant in list
    for rank, docno in enumerate(ranking, 1):
        grade = 0
        if docno in judged.rel:
            inlist += 1
            grade = judged.rel[docno]
            if grade > 0:
                iprob = judged.inclusion_prob[docno]
                prec = (1 + sum_prec) / rank
                up += prec / iprob
                found.append((iprob, prec, rank))
                sum_prec += 1 / iprob
        if rank <= NDCG_CUTOFF:
            dcg += _gain(grade) / _discount(rank)
        if rank == P_CUTOFF:
            p30 = sum_prec / rank
        if rank == rounded:
            rprec = sum_prec / rank
    statap = up / est_r
    retrieved = set(ranking)
    missed = [
        judged.inclusion_prob[d]
        for d, rel in judged.rel.items()
        if rel > 0 and d not in retrieved
    ]
    return TopicStatap(
        **common,
        sampled_in_list=inlist,
        sampled_rel_in_list=len(found),
        statap=statap,
        rprec=rprec if rprec is not None else sum_prec / est_r,
        p30=p30 if p30 is not None else sum_prec / P_CUTOFF,
        ndcg=dcg / ndcg_normaliser(judged.n_rel, judged.n_high),
        var=statap_variance(
            found=found,
            missed=missed,
            statap=statap,
            est_r=est_r,
            n_sampled=judged.n_sampled,
        ),
    )


def statap_variance(
    *,
    found: list[tuple[float, float, int]],
    missed: list[float],
    statap: float,
    est_r: float,
    n_sampled: int,
) -> float:
    """Variance of statAP (docs/reference/algorithms.md 2.6).

    ``y_i = (prec_i - statAP)/π_i`` for the relevant documents in the list (``found``:
    ``(π, prec, rank)`` in rank order), ``-statAP/π_i`` for those it missed;
    ``A = Σ (1-π_i) y_i²``, ``B = Σ_{i≠j} y_i y_j``,
    ``C = Σ_{i<=m} (Σ_{l<=i} (1-π_l)/π_l²)/r_i²``;
    ``var = (A - B/(n_sampled - 1) + C)/R̂²`` (NaN for ``n_sampled == 1``).
    """
    if n_sampled <= 1:
        return NAN
    sum_a = sum_b = sum_c = cumulative = prefix = 0.0
    for iprob, prec, rank in found:
        y = (prec - statap) / iprob
        sum_a += (1 - iprob) * y * y
        sum_b += 2 * y * prefix
        prefix += y
        cumulative += (1 - iprob) / iprob / iprob
        sum_c += cumulative / rank / rank
    for iprob in missed:
        y = -statap / iprob
        sum_a += (1 - iprob) * y * y
        sum_b += 2 * y * prefix
        prefix += y
    return (sum_a - sum_b / (n_sampled - 1) + sum_c) / est_r / est_r


def statap_summary(topics: list[TopicStatap]) -> StatapSummary:
    """Means over valid topics (plain sums divided by their count, as the script)."""
    valid = [t for t in topics if t.valid]
    n = len(valid)
    if n == 0:
        return StatapSummary(0, NAN, NAN, NAN, NAN, NAN, NAN)
    sum_var = 0.0
    for t in valid:
        sum_var += t.var
    return StatapSummary(
        valid_topics=n,
        stat_map=sum(t.statap for t in valid) / n,
        stat_mrp=sum(t.rprec for t in valid) / n,
        stat_mpc30=sum(t.p30 for t in valid) / n,
        stat_mndcg=sum(t.ndcg for t in valid) / n,
        var_map=sum_var / n / n,
        mean_est_r=sum(t.est_r for t in valid) / n,
    )


def statap_evaluate(
    prels: Mapping[str, TopicPrels],
    run: Mapping[str, Mapping[str, float]],
    *,
    only: Only = "all",
    name: str = "",
) -> StatapResult:
    """Evaluate one run (``qid -> {docno: score}``) against loaded prels.

    Topics are visited in numeric order; a judged topic the run does not mention is
    left out (not counted as 0). ``only="neu"``/``"mixed"`` are the script's ``-n``/``-m``;
    ``UMASS`` topics (no statAP-sampled document) are never evaluated.
    """
    topics: list[TopicStatap] = []
    for qid in sorted(prels, key=topic_key):
        if qid not in run:
            continue
        judged = prels[qid]
        label = judged.label
        skipped = (
            label == "UMASS"
            or (label == "NEU" and only == "mixed")
            or (label == "MIXED" and only == "neu")
        )
        if skipped:
            topics.append(TopicStatap(qid=qid, label=label, evaluated=False))
            continue
        topics.append(topic_statap(judged, ranking_order(run[qid]), label=label))
    return StatapResult(name, only, tuple(topics), statap_summary(topics))


def statap_rows(
    result: StatapResult, *, per_topic: bool = False
) -> Iterator[tuple[str, str, float]]:
    """``(measure, topic, value)`` rows: per valid topic if asked, then ``all``.

    Measures: statAP, statRprec, statP@30, statnDCG, estR, statAP_var, statAP_ci_low,
    statAP_ci_high; ``all`` carries the means, ``VAR_MAP`` as ``statAP_var`` and its
    interval, plus ``valid_topics``.
    """
    if per_topic:
        for t in result.topics:
            if t.evaluated:
                low, high = t.ci95
                values = (t.statap, t.rprec, t.p30, t.ndcg, t.est_r, t.var, low, high)
                yield from (
                    (m, t.qid, v) for m, v in zip(MEASURES, values, strict=True)
                )
    s = result.summary
    low, high = s.ci95
    values = (
        s.stat_map,
        s.stat_mrp,
        s.stat_mpc30,
        s.stat_mndcg,
        s.mean_est_r,
        s.var_map,
        low,
        high,
    )
    yield from ((m, "all", v) for m, v in zip(MEASURES, values, strict=True))
    yield ("valid_topics", "all", float(s.valid_topics))
