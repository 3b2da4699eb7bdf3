"""An automatic judge audited by the people's sample: agreement, bias, and what it is
worth for estimating each topic's number of relevant documents R.

Every pooled pair has the judge's grade (or none); a probability sample of the pairs
(the people's sample, inclusion probabilities π known) has the people's grade. With
``y`` = people relevant (grade >= ``relevance_level``) and ``j`` = judge relevant (grade
>= ``judge_relevance_level``), Horvitz-Thompson totals over the sample give the 2x2
table ``(Σ_S jy/π, Σ_S j(1-y)/π, Σ_S (1-j)y/π, Σ_S (1-j)(1-y)/π)`` and:

* precision = HT(jy)/HT(j), recall = HT(jy)/HT(y), Cohen's kappa of the table;
* P(people relevant | judge grade g) = HT(y 1[g])/HT(1[g]) per grade (or per quantile
  bin of the grades when they are scores with many distinct values);
* R per topic without the judge: HT(y); with the judge: the difference estimator with
  the judge's cross-fitted P̂(relevant | grade) as auxiliary and one pooled slope
  shrunk by its error (:mod:`nuggets_app.ir.judge_design`); the count ratio = the
  judge's count (known) / the sum of R̂.

Variances are Taylor-linearised and use Hájek's fixed-size approximation per topic.
95% intervals: kappa ``value ± t sd``, with ``t`` Student's quantile at Satterthwaite's
degrees of freedom of the variance (1.96 when many pairs carry it), clipped to
[-1, 1], and spanning the kappas of precision's interval where the sample holds fewer
than ``THIN_BELOW`` pairs relevant to both (:func:`_kappa`); precision, recall and P(relevant | grade) Wilson's score interval at the
design's effective sample size (:func:`~nuggets_app.ir.judge_design.proportion_interval`:
a proportion of 0 seen on four pairs is not known exactly); R ``± 1.96 sd`` between
the relevant pairs the sample holds and the pool less the non-relevant ones it holds,
its variance floored on thin topics as the product's ``sparse`` interval does; the
count ratio ``± 1.96 sd``, >= 0. A pair with π = 1 must carry a people's grade.
A judge with no grade for a pair counts as calling it not relevant.

``worth_judgments`` (per topic, averaged over topics whose R̂ has a variance): the
uniform design's variance ``V(n) = N²(1/n - 1/N) S²`` reaches the with-judge variance
``V_J`` at ``n' = 1 / ((1/n - 1/N) V_J/V_HT + 1/N)``; the judge is worth ``n' - n``
people's judgments. No Django here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nuggets_app.errors import DomainError
from nuggets_app.ir import judge_design as jd
from nuggets_app.ir.intervals import THIN_BELOW
from nuggets_app.ir.judge_design import Design

MAX_DISAGREEMENTS = 20


class JudgeAuditError(DomainError):
    """Pairs that cannot be audited; the message names the pair or the value."""


@dataclass(frozen=True)
class Estimate:
    """A figure with its 95% interval (NaN everywhere when undefined)."""

    value: float
    low: float
    high: float

    @property
    def width(self) -> float:
        return self.high - self.low

    def covers(self, truth: float) -> bool:
        return self.low <= truth <= self.high


@dataclass(frozen=True)
class PoolPair:
    """One pooled (topic, document) pair."""

    qid: str
    docno: str
    judge_grade: float | None  # None: the judge did not grade it
    human_grade: int | None  # None: not in the people's sample
    inclusion_prob: float  # its π in the people's sample (1.0: judged with certainty)


@dataclass(frozen=True)
class TopicAudit:
    qid: str
    kappa: Estimate
    precision: Estimate
    recall: Estimate
    judge_count: int
    people_r: Estimate  # R with the judge (the best estimate)
    count_ratio: Estimate
    r_with_judge: Estimate
    r_without_judge: Estimate
    pool_size: int = 0
    sampled: int = 0  # pairs with a people's grade
    uncertain: int = 0  # pooled pairs with π < 1
    uncertain_sampled: int = 0  # of those, the ones with a people's grade
    r_var_with: float = math.nan  # the variances behind the two intervals of R
    r_var_without: float = math.nan


@dataclass(frozen=True)
class JudgeAudit:
    kappa: Estimate
    precision: Estimate
    recall: Estimate
    judge_count: int
    people_r: Estimate
    count_ratio: Estimate
    p_relevant_by_grade: dict[float, Estimate]  # P(people relevant | judge grade g)
    topics: tuple[TopicAudit, ...]  # most-off first (|log count_ratio|, then kappa)
    # (qid, docno, judge_grade, human_grade, 1/π): sampled pairs they disagree on most
    disagreements: tuple[tuple[str, str, float | None, int, float], ...]
    width_ratio: float  # mean width of R's interval with the judge / without
    worth_judgments: float  # people's judgments per topic the judge is worth

    def summary(self) -> str:
        """The audit in plain words."""
        return audit_summary(self)


@dataclass(frozen=True)
class _Pairs:
    qids: tuple[str, ...]
    design: Design
    y: np.ndarray  # people relevant (0 where not sampled)
    j: np.ndarray  # judge relevant
    grades: np.ndarray  # judge grade, NaN where none


def _arrays(
    pairs: Sequence[PoolPair], relevance_level: int, judge_level: float
) -> _Pairs:
    if not pairs:
        raise JudgeAuditError("there are no pooled pairs to audit")
    seen: set[tuple[str, str]] = set()
    for pair in pairs:
        key = (pair.qid, pair.docno)
        if key in seen:
            raise JudgeAuditError(f"pair {pair.qid} {pair.docno} is given twice")
        seen.add(key)
        if not 0.0 < pair.inclusion_prob <= 1.0:
            raise JudgeAuditError(
                f"pair {pair.qid} {pair.docno} has inclusion probability "
                f"{pair.inclusion_prob!r}, not in (0, 1]"
            )
        if pair.inclusion_prob == 1.0 and pair.human_grade is None:
            raise JudgeAuditError(
                f"pair {pair.qid} {pair.docno} is judged with certainty but has no "
                "people's grade"
            )
    qids = tuple(sorted({p.qid for p in pairs}))
    index = {q: i for i, q in enumerate(qids)}
    topic = np.array([index[p.qid] for p in pairs], dtype=np.int64)
    pi = np.array([p.inclusion_prob for p in pairs], dtype=np.float64)
    sampled = np.array([p.human_grade is not None for p in pairs])
    y = np.array(
        [
            float(p.human_grade is not None and p.human_grade >= relevance_level)
            for p in pairs
        ]
    )
    grades = np.array(
        [math.nan if p.judge_grade is None else float(p.judge_grade) for p in pairs]
    )
    j = np.where(np.isnan(grades), 0.0, (grades >= judge_level).astype(np.float64))
    return _Pairs(qids, Design(topic, pi, sampled, len(qids)), y, j, grades)


def _estimate(
    value: float, var: float, low: float, high: float, df: float = math.inf
) -> Estimate:
    if not math.isfinite(value):
        return Estimate(math.nan, math.nan, math.nan)
    value = float(min(max(value, low), high))
    lo, hi = jd.interval(value, var, float(low), float(high), df)
    return Estimate(value, float(lo), float(hi))


def _proportion(design: Design, num: np.ndarray, den: np.ndarray) -> Estimate:
    """The ratio ``HT(num)/HT(den)`` (``num`` a part of the 0/1 ``den``) with its
    Wilson interval at the design's effective sample size."""
    value, var, df = jd.linearised(
        design, np.column_stack([num, den]), jd.ratio, jd.ratio_grad
    )
    if not math.isfinite(value):
        return Estimate(math.nan, math.nan, math.nan)
    inside = design.sampled & (design.pi < 1.0) & (den > 0)
    boundary = (
        float(inside.sum()) / (1.0 - float(design.pi[inside].mean()))
        if inside.any()
        else math.inf
    )
    value = min(max(value, 0.0), 1.0)
    low, high = jd.proportion_interval(value, var, df, boundary)
    return Estimate(value, low, high)


def _kappa(design: Design, table: np.ndarray, precision: Estimate) -> Estimate:
    """Kappa with its linearised interval; where fewer than ``THIN_BELOW`` uncertain
    sampled pairs are relevant to both, widened to the kappas of precision's interval.

    With the table's margins held, ``a`` (both relevant) = precision x the judge's
    count and kappa = ``2(a N - J P)/(J (N - P) + (N - J) P)`` is increasing in it; so
    precision's Wilson interval maps onto kappa. Where the sample holds almost no
    pair of the cell, kappa's linearised variance lacks that cell's term, as
    precision's did before Wilson's interval (the threshold is the product's
    ``sparse`` one).
    """
    value, var, df = jd.linearised(design, table, jd.kappa, jd.kappa_grad)
    kappa = _estimate(value, var, -1.0, 1.0, df)
    both = design.sampled & (design.pi < 1.0) & (table[:, 0] > 0)
    if int(both.sum()) >= THIN_BELOW or not math.isfinite(precision.low):
        return kappa
    if not math.isfinite(kappa.value):
        return kappa
    a, b, c, d = design.total(table)
    n, judge, people = a + b + c + d, a + b, a + c
    den = judge * (n - people) + (n - judge) * people
    if not den > 0:
        return kappa
    low, high = (
        2 * (p * judge * n - judge * people) / den
        for p in (precision.low, precision.high)
    )
    return Estimate(
        kappa.value,
        max(-1.0, min(kappa.low, float(low))),
        min(1.0, max(kappa.high, float(high))),
    )


def _agreement(design: Design, y: np.ndarray, j: np.ndarray) -> tuple[Estimate, ...]:
    """(kappa, precision, recall) of the judge against the people on ``design``."""
    jy = j * y
    table = np.column_stack([jy, j * (1 - y), (1 - j) * y, (1 - j) * (1 - y)])
    precision = _proportion(design, jy, j)
    return (_kappa(design, table, precision), precision, _proportion(design, jy, y))


def _by_grade(
    design: Design, y: np.ndarray, bins: np.ndarray, keys: list[float]
) -> dict[float, Estimate]:
    result: dict[float, Estimate] = {}
    for b, key in enumerate(keys):
        member = (bins == b).astype(np.float64)
        result[key] = _proportion(design, y * member, member)
    return result


def _r_domain(data: _Pairs) -> tuple[np.ndarray, np.ndarray]:
    """Per topic, the range R lies in: the relevant pairs sampled, and the pool less
    the non-relevant pairs sampled."""
    d = data.design
    k = d.n_topics
    rel = np.bincount(d.topic, weights=d.sampled * data.y, minlength=k)
    nonrel = np.bincount(d.topic, weights=d.sampled * (1 - data.y), minlength=k)
    pool = np.bincount(d.topic, minlength=k).astype(np.float64)
    return rel, pool - nonrel


@dataclass(frozen=True)
class _RFigures:
    with_judge: list[Estimate]
    without: list[Estimate]
    var_with: np.ndarray
    var_without: np.ndarray
    total: Estimate


def _r_figures(data: _Pairs, bins: np.ndarray) -> _RFigures:
    d = data.design
    aux = jd.crossfit_probabilities(d, data.y, bins)
    prevalence = jd.crossfit_probabilities(d, data.y, np.zeros_like(bins))
    slope = jd.pooled_slope(d, data.y, aux)
    r_with, v_with = jd.topic_r(d, data.y, aux, slope, aux)
    r_ht, v_ht = jd.topic_r(d, data.y, aux, 0.0, prevalence)
    low, high = _r_domain(data)
    with_judge = [
        _estimate(r, v, lo, hi)
        for r, v, lo, hi in zip(r_with, v_with, low, high, strict=True)
    ]
    without = [
        _estimate(r, v, lo, hi)
        for r, v, lo, hi in zip(r_ht, v_ht, low, high, strict=True)
    ]
    total_value = math.fsum(e.value for e in with_judge)
    total = _estimate(total_value, float(v_with.sum()), low.sum(), high.sum())
    return _RFigures(with_judge, without, v_with, v_ht, total)


def _count_ratio(count: int, r: Estimate, var: float) -> Estimate:
    """``J / R̂`` with ``V ≈ J² V(R̂) / R̂⁴`` (J, the judge's count, is known)."""
    if not r.value > 0:
        return Estimate(math.nan, math.nan, math.nan)
    value = count / r.value
    return _estimate(value, count * count * var / r.value**4, 0.0, math.inf)


def _worth(data: _Pairs, figures: _RFigures) -> float:
    """Mean over topics of ``n' - n`` (module docstring); topics with no variance
    without the judge (nothing uncertain, or no relevant pair sampled) are left out."""
    d = data.design
    uncertain = d.pi < 1.0
    k = d.n_topics
    n = np.bincount(d.topic, weights=(d.sampled & uncertain), minlength=k)
    big_n = np.bincount(d.topic, weights=uncertain, minlength=k)
    worth = []
    for t in range(k):
        v_ht, v_j = figures.var_without[t], figures.var_with[t]
        if not (v_ht > 0 and n[t] > 0 and big_n[t] > n[t]):
            continue
        gap = 1.0 / n[t] - 1.0 / big_n[t]
        needed = 1.0 / (gap * v_j / v_ht + 1.0 / big_n[t])
        worth.append(needed - n[t])
    return float(np.mean(worth)) if worth else 0.0


def _width_ratio(figures: _RFigures) -> float:
    pairs = [
        (w.width, h.width)
        for w, h in zip(figures.with_judge, figures.without, strict=True)
        if math.isfinite(w.width) and math.isfinite(h.width)
    ]
    without = math.fsum(h for _, h in pairs)
    if not without > 0:
        return math.nan
    return math.fsum(w for w, _ in pairs) / without


def _off_key(topic: TopicAudit) -> tuple[float, float, str]:
    """Most-off first: the largest |log count ratio| (a judge counting relevant pairs
    where the people's R̂ is 0 first), then the lowest kappa."""
    ratio = topic.count_ratio.value
    if math.isnan(ratio):
        off = math.inf if topic.judge_count > 0 else 0.0
    else:
        off = math.inf if ratio == 0 else abs(math.log(ratio))
    kappa = topic.kappa.value
    return (-off, kappa if math.isfinite(kappa) else 1.0, topic.qid)


def _topic_audits(data: _Pairs, figures: _RFigures) -> tuple[TopicAudit, ...]:
    d = data.design
    audits = []
    for t, qid in enumerate(data.qids):
        mask = d.topic == t
        sub = d.subset(mask)
        kappa, precision, recall = _agreement(sub, data.y[mask], data.j[mask])
        count = int(data.j[mask].sum())
        r_with = figures.with_judge[t]
        audits.append(
            TopicAudit(
                qid=qid,
                kappa=kappa,
                precision=precision,
                recall=recall,
                judge_count=count,
                people_r=r_with,
                count_ratio=_count_ratio(count, r_with, figures.var_with[t]),
                r_with_judge=r_with,
                r_without_judge=figures.without[t],
                pool_size=int(mask.sum()),
                sampled=int(d.sampled[mask].sum()),
                uncertain=int((mask & (d.pi < 1)).sum()),
                uncertain_sampled=int((mask & (d.pi < 1) & d.sampled).sum()),
                r_var_with=float(figures.var_with[t]),
                r_var_without=float(figures.var_without[t]),
            )
        )
    return tuple(sorted(audits, key=_off_key))


def _disagreements(
    pairs: Sequence[PoolPair], data: _Pairs, limit: int
) -> tuple[tuple[str, str, float | None, int, float], ...]:
    """Sampled pairs whose relevance the judge and the people decide differently,
    the largest grade difference first, then the heaviest (1/π)."""
    rows = []
    for i, pair in enumerate(pairs):
        if pair.human_grade is None or data.j[i] == data.y[i]:
            continue
        judge = 0.0 if pair.judge_grade is None else pair.judge_grade
        gap = abs(judge - pair.human_grade)
        weight = 1.0 / pair.inclusion_prob
        rows.append((-gap, -weight, pair.qid, pair.docno, i))
    rows.sort()
    return tuple(
        (qid, docno, pairs[i].judge_grade, int(pairs[i].human_grade or 0), -neg_w)
        for _, neg_w, qid, docno, i in rows[:limit]
    )


def audit_judge(
    pairs: Sequence[PoolPair],
    *,
    relevance_level: int,
    judge_relevance_level: float | None = None,
    max_disagreements: int = MAX_DISAGREEMENTS,
) -> JudgeAudit:
    """Audit one judge's grades of a pool against the people's sample of it.

    ``judge_relevance_level`` (default ``relevance_level``) is the judge's grade from
    which it calls a pair relevant (a threshold on a score for a scoring judge).
    Estimators, variances and intervals: the module docstring.
    """
    judge_level = (
        float(relevance_level)
        if judge_relevance_level is None
        else float(judge_relevance_level)
    )
    data = _arrays(pairs, relevance_level, judge_level)
    d = data.design
    if not d.sampled.any():
        raise JudgeAuditError("no pooled pair has a people's grade yet")
    kappa, precision, recall = _agreement(d, data.y, data.j)
    bins, keys = jd.grade_bins(data.grades)
    figures = _r_figures(data, bins)
    count = int(data.j.sum())
    return JudgeAudit(
        kappa=kappa,
        precision=precision,
        recall=recall,
        judge_count=count,
        people_r=figures.total,
        count_ratio=_count_ratio(count, figures.total, float(figures.var_with.sum())),
        p_relevant_by_grade=_by_grade(d, data.y, bins, keys),
        topics=_topic_audits(data, figures),
        disagreements=_disagreements(pairs, data, max_disagreements),
        width_ratio=_width_ratio(figures),
        worth_judgments=_worth(data, figures),
    )


def _fmt(x: float) -> str:
    return f"{x:.2f}" if math.isfinite(x) else "unknown"


def audit_summary(audit: JudgeAudit) -> str:
    """The audit in a few plain sentences."""
    ratio = audit.count_ratio
    if audit.judge_count == 0:
        first = "This judge calls no pooled document relevant."
    elif math.isfinite(ratio.value):
        first = (
            f"This judge calls {ratio.value:.2g} times as many documents relevant as "
            f"your assessors (95% interval {_fmt(ratio.low)} to {_fmt(ratio.high)}); "
            f"kappa {_fmt(audit.kappa.value)}."
        )
    else:
        first = (
            "Your assessors' sample holds no relevant document yet, so the judge's "
            f"count ({audit.judge_count}) cannot be compared with theirs."
        )
    if math.isfinite(audit.width_ratio):
        change = round(100 * abs(1 - audit.width_ratio))
        way = "narrower" if audit.width_ratio <= 1 else "wider"
        second = (
            f" With it your intervals on the number of relevant documents are about "
            f"{change}% {way}; it is worth about {audit.worth_judgments:.0f} people's "
            "judgments per topic."
        )
    else:
        second = " Your sample is too small to say how much it narrows the intervals."
    return first + second


@dataclass(frozen=True)
class TopicPlan:
    """People's judgments a topic needs in all (pairs judged with certainty
    included) for the target half-width on R, with and without the judge."""

    qid: str
    judged: int
    with_judge: int
    without_judge: int


@dataclass(frozen=True)
class SamplePlan:
    half_width: float
    relative: bool
    topics: tuple[TopicPlan, ...]
    with_judge: int  # sums over topics
    without_judge: int
    judged: int


def plan_sample_size(
    audit: JudgeAudit, *, half_width: float, relative: bool = False
) -> SamplePlan:
    """People's judgments per topic for a 95% interval on R of half-width
    ``half_width`` (``relative``: that fraction of the topic's R̂), with the judge and
    without, from the variances the audit estimated.

    Per topic, with ``n`` of its ``N`` uncertain pairs judged and variance ``V̂``, the
    uniform design's variance ``N²(1/n - 1/N) S²`` gives ``S²``, and the size needed
    is ``n' = 1 / ((h/1.96)² / (N² S²) + 1/N)`` (at most ``N``), plus the pairs judged
    with certainty. A statAP sample is planned as if it were uniform: a guide, as its
    variance scales with ``1/n`` only approximately. A topic with no variance yet
    (nothing relevant seen, no model to anticipate) keeps its size.
    """
    if not half_width > 0:
        raise JudgeAuditError(f"the half-width must be > 0, got {half_width!r}")
    plans = []
    for t in audit.topics:
        r = max(t.r_with_judge.value, 1.0) if math.isfinite(t.r_with_judge.value) else 1
        half = half_width * r if relative else half_width
        certain = t.pool_size - t.uncertain
        n, big_n = t.uncertain_sampled, t.uncertain
        plans.append(
            TopicPlan(
                qid=t.qid,
                judged=t.sampled,
                with_judge=certain + jd.size_needed(t.r_var_with, n, big_n, half),
                without_judge=certain + jd.size_needed(t.r_var_without, n, big_n, half),
            )
        )
    ordered = tuple(sorted(plans, key=lambda p: p.qid))
    return SamplePlan(
        half_width=half_width,
        relative=relative,
        topics=ordered,
        with_judge=sum(p.with_judge for p in ordered),
        without_judge=sum(p.without_judge for p in ordered),
        judged=sum(p.judged for p in ordered),
    )
