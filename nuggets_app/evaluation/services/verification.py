"""Verification queue: re-judge a random sample of the matcher's inferred labels.

Population, per topic of a finished matching job: the job's scored documents that
belong to its pool and that nobody has judged. A decision rule splits them into two
strata, *inferred relevant* and *inferred non-relevant*. From each stratum ``h`` of
``N_h`` documents a simple random sample without replacement of
``n_h = min(requested, N_h)`` documents is drawn with a generator seeded by
``(seed, qid, stratum)``; the sampling fraction ``f_h = n_h / N_h`` is stored as each
document's inclusion probability and in ``Sample.draws`` with the inferred label of
every drawn document (so re-scoring the job later does not change what was verified).
The drawn documents form a ``verification`` sample of the job's pool, queued in a
seeded shuffled order (the assessor cannot tell the strata apart), and are assigned to
assessors, so the ordinary judging pages serve them.

With a fitted relevance model, ``uncertain`` asks for a third stratum per topic: the
``uncertain`` unjudged documents whose p is closest to 0.5 (ties by docno), taken out
of the two others and judged in full (fraction 1), where the model knows least. Every
drawn document keeps its p, and the report says how calibrated p was on the judged
drawn documents (mean p, observed rate of relevance, Brier score), per stratum label.

Report: agreement = share of judged drawn documents whose human label (under the
collection's aggregation rule, relevant if ``>= collection.relevance_level``) equals the inferred one. Per stratum
``p_h = a_h / m_h`` (``m_h`` judged, ``a_h`` agreeing). A group of strata (a label over
all topics, or everything) is estimated stratum-weighted over its strata with at least
one judged document::

    W_h = N_h / Σ N_h,   p = Σ W_h p_h,
    var = Σ W_h² (1 - m_h/N_h) p_h (1 - p_h) / m_h

and its 95% interval is Wilson's score interval for ``p`` with the effective sample
size ``n_eff = p(1-p)/var`` (Kish's design-effect adjustment; a single stratum sampled
without replacement gets ``m_h / (1 - f_h)``). When ``var`` is 0, ``n_eff`` is the
number of judged documents, or the interval is ``[p, p]`` if every stratum was judged
in full (nothing is left to estimate). Wilson's interval always contains ``p``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from nuggets_app.errors import DomainError
from nuggets_app.evaluation.services.diagnostics import Table
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.readiness import rule_undecided
from nuggets_app.inference.services.rule_application import rule_apply
from nuggets_app.ir.prels import topic_key
from nuggets_app.judging.selectors import human_grades
from nuggets_app.models import (
    Judgment,
    MatchJob,
    MatchResult,
    PoolDocument,
    Sample,
    SampleDocument,
    Topic,
)
from nuggets_app.pooling.services.assignments import assignment_create

STRATA = ("relevant", "nonrelevant")
UNCERTAIN = "uncertain"
Z_95 = 1.959963984540054


class VerificationError(DomainError):
    """A verification queue cannot be made or reported as asked; says why."""


# --- drawing ------------------------------------------------------------------------
@dataclass(frozen=True)
class Stratum:
    """One topic's stratum: its population size and the documents drawn from it."""

    qid: str
    label: str
    population: int
    drawn: tuple[str, ...]

    @property
    def fraction(self) -> float:
        """Sampling fraction ``n_h / N_h`` (0 for an empty stratum)."""
        return len(self.drawn) / self.population if self.population else 0.0


def verification_plan(
    *,
    population: Mapping[str, Mapping[str, bool]],
    relevant: int,
    nonrelevant: int,
    seed: int,
) -> list[Stratum]:
    """Draw per topic ``relevant`` inferred-relevant and ``nonrelevant`` inferred
    non-relevant docnos from ``population`` (``qid -> {docno: inferred relevant}``).

    Deterministic for a seed: each stratum is sorted by docno and sampled with
    ``random.Random(f"{seed}:{qid}:{label}")``.
    """
    if relevant < 0 or nonrelevant < 0 or relevant + nonrelevant == 0:
        raise VerificationError("ask for at least one document per topic")
    wanted = {"relevant": relevant, "nonrelevant": nonrelevant}
    strata = []
    for qid in sorted(population, key=topic_key):
        docs = population[qid]
        for label in STRATA:
            members = sorted(
                d for d, rel in docs.items() if rel == (label == "relevant")
            )
            rng = random.Random(f"{seed}:{qid}:{label}")
            drawn = rng.sample(members, min(wanted[label], len(members)))
            strata.append(Stratum(qid, label, len(members), tuple(drawn)))
    return strata


def verification_population(
    *, job: MatchJob, rule: DecisionRule
) -> dict[str, dict[str, bool]]:
    """``qid -> {docno: inferred relevant}`` for the job's unjudged pool documents
    (a topic the rule cannot decide, e.g. one without nuggets under the paper rule,
    has none: there is nothing inferred to verify)."""
    pool = _job_pool(job)
    undecided = {t.pk for t in rule_undecided(job, rule)}
    decisions = {
        t: d for t, d in rule_apply(job=job, rule=rule).items() if t not in undecided
    }
    topics = dict(job.topics.values_list("pk", "qid"))
    pooled = set(
        PoolDocument.objects.filter(pool=pool, topic_id__in=list(topics)).values_list(
            "topic_id", "document_id"
        )
    )
    judged = set(
        Judgment.objects.filter(
            topic_id__in=list(topics), relevance__isnull=False
        ).values_list("topic_id", "document_id")
    )
    docnos = dict(
        MatchResult.objects.filter(job=job).values_list(
            "document_id", "document__docno"
        )
    )
    out: dict[str, dict[str, bool]] = {}
    for topic_id, decided in decisions.items():
        out[topics[topic_id]] = {
            docnos[doc_id]: relevant
            for doc_id, relevant in decided.items()
            if (topic_id, doc_id) in pooled and (topic_id, doc_id) not in judged
        }
    return out


def _job_pool(job: MatchJob):
    if job.pool_id is not None:
        return job.pool
    if job.sample_id is not None:
        return job.sample.pool
    raise VerificationError(
        f"job {job.pk} matched the whole collection; verification needs a job over "
        "a pool or a sample"
    )


def verification_queue_create(
    *,
    job: MatchJob,
    rule: DecisionRule,
    relevant: int,
    nonrelevant: int,
    seed: int,
    assessors: Sequence[Any],
    name: str = "",
    overlap: int = 1,
    uncertain: int = 0,
) -> Sample:
    """Draw the verification sample of ``job`` under ``rule`` and assign it.

    Drawing again under the same name with the same job, rule, sizes and seed returns
    the existing sample (with any new assessors assigned); other parameters under a
    taken name are refused.
    """
    if job.status != MatchJob.Status.DONE:
        raise VerificationError(f"job {job.pk} is {job.status}, not done")
    pool = _job_pool(job)
    name = name or f"verify-job{job.pk}-seed{seed}"
    params = {
        "job": job.pk,
        "rule": rule.as_dict(),
        "relevant": relevant,
        "nonrelevant": nonrelevant,
    }
    if uncertain:
        params["uncertain"] = uncertain
    with transaction.atomic():
        sample = Sample.objects.filter(pool=pool, name=name).first()
        if sample is not None:
            if (
                sample.method != Sample.Method.VERIFICATION
                or sample.seed != seed
                or (verification_params(sample) != params)
            ):
                raise VerificationError(
                    f"sample {name} of pool {pool.name} exists with other parameters; "
                    "choose a new name"
                )
        else:
            sample = _sample_create(job, rule, pool, name, seed, params)
        if assessors:
            assignment_create(sample=sample, assessors=assessors, overlap=overlap)
    return sample


def _sample_create(job, rule, pool, name, seed, params) -> Sample:
    population = verification_population(job=job, rule=rule)
    p_of = _unjudged_p(job)
    if params.get("uncertain") and not p_of:
        raise VerificationError(
            f"job {job.pk} has no fitted relevance model: nothing has a p near 0.5"
        )
    near = _near_half(population, p_of, params.get("uncertain", 0))
    strata = verification_plan(
        population={
            q: {d: r for d, r in docs.items() if d not in near.get(q, {})}
            for q, docs in population.items()
        },
        relevant=params["relevant"],
        nonrelevant=params["nonrelevant"],
        seed=seed,
    )
    strata += [
        Stratum(q, UNCERTAIN, len(docs), tuple(sorted(docs)))
        for q, docs in near.items()
    ]
    strata.sort(key=lambda s: topic_key(s.qid))
    if not any(s.drawn for s in strata):
        raise VerificationError(f"job {job.pk} has no unjudged pool document to verify")
    sample = Sample.objects.create(
        pool=pool,
        name=name,
        method=Sample.Method.VERIFICATION,
        seed=seed,
        size=params["relevant"] + params["nonrelevant"],
    )
    topics = dict(job.topics.values_list("qid", "pk"))
    doc_ids = dict(
        MatchResult.objects.filter(job=job).values_list(
            "document__docno", "document_id"
        )
    )
    rows = []
    for qid in dict.fromkeys(s.qid for s in strata):
        mine = [s for s in strata if s.qid == qid]
        record = {**params, "strata": {}}
        drawn = []
        for s in mine:
            record["strata"][s.label] = {
                "population": s.population,
                "drawn": list(s.drawn),
                "fraction": s.fraction,
                "inferred": {d: population[qid][d] for d in s.drawn},
            }
            if p_of:
                record["strata"][s.label]["p"] = {d: p_of[qid][d] for d in s.drawn}
            drawn += [(d, s.fraction) for d in s.drawn]
        random.Random(f"{seed}:{qid}:queue").shuffle(drawn)
        record.update(draws=len(drawn), distinct=len(drawn), pi="stratum fraction")
        record["pool_size"] = sum(s.population for s in mine)
        sample.draws[qid] = record
        rows += [
            SampleDocument(
                sample=sample,
                topic_id=topics[qid],
                document_id=doc_ids[d],
                inclusion_prob=f,
                order=i,
            )
            for i, (d, f) in enumerate(drawn, 1)
        ]
    SampleDocument.objects.bulk_create(rows)
    sample.save(update_fields=["draws"])
    return sample


def _unjudged_p(job: MatchJob) -> dict[str, dict[str, float]]:
    """``qid -> {docno: model p}`` of the job's documents ({} without a model)."""
    from nuggets_app.evaluation.selectors import SourceError
    from nuggets_app.inference.services.job_model import job_probabilities

    if not job_probabilities(job=job, override=False):
        return {}
    try:
        return _model_p(job)
    except SourceError:
        return {}


def _model_p(job: MatchJob) -> dict[str, dict[str, float]]:
    from nuggets_app.inference.services.job_model import job_probabilities

    columns = job_probabilities(job=job, override=False)
    qids = dict(Topic.objects.filter(pk__in=list(columns)).values_list("pk", "qid"))
    docnos = dict(
        MatchResult.objects.filter(job=job).values_list(
            "document_id", "document__docno"
        )
    )
    return {
        qids[t]: {docnos[d]: v for d, v in zip(docs.tolist(), p.tolist(), strict=True)}
        for t, (docs, p) in columns.items()
    }


def _near_half(
    population: Mapping[str, Mapping[str, bool]],
    p_of: Mapping[str, Mapping[str, float]],
    n: int,
) -> dict[str, dict[str, bool]]:
    """Per topic, the ``n`` documents of the population with p closest to 0.5."""
    if n <= 0:
        return {}
    out = {}
    for qid, docs in population.items():
        ranked = sorted(docs, key=lambda d: (abs(p_of[qid][d] - 0.5), d))[:n]
        if ranked:
            out[qid] = {d: docs[d] for d in ranked}
    return out


def verification_params(sample: Sample) -> dict[str, Any]:
    """The job, rule and sizes a verification sample was drawn with."""
    record = next(iter(sample.draws.values()), {})
    keys = ("job", "rule", "relevant", "nonrelevant")
    out = {k: record.get(k) for k in keys}
    if record.get("uncertain"):
        out["uncertain"] = record["uncertain"]
    return out


# --- report ---------------------------------------------------------------------------
def wilson_interval(p: float, n: float, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``p`` observed on ``n`` (may be an
    effective, non-integer size): ``(p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) /
    (1 + z²/n)``."""
    if n <= 0 or math.isnan(p):
        return (math.nan, math.nan)
    z2 = z * z
    centre = p + z2 / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    scale = 1 + z2 / n
    # Mathematically low <= p <= high; the min/max keep it so despite rounding.
    low = min(p, max(0.0, (centre - half) / scale))
    return (low, max(p, min(1.0, (centre + half) / scale)))


@dataclass(frozen=True)
class StratumResult:
    """A stratum's counts: population, drawn, judged, agreeing."""

    qid: str
    label: str
    population: int
    drawn: int
    judged: int
    agree: int

    @property
    def fraction(self) -> float:
        return self.drawn / self.population if self.population else 0.0


@dataclass(frozen=True)
class Agreement:
    """A stratum-weighted agreement estimate with its Wilson 95% interval."""

    group: str
    label: str
    population: int
    drawn: int
    judged: int
    agree: int
    estimate: float
    ci_low: float
    ci_high: float


def agreement_estimate(
    group: str, label: str, strata: Sequence[StratumResult]
) -> Agreement:
    """Stratum-weighted agreement over ``strata`` (module docstring)."""
    used = [s for s in strata if s.judged > 0]
    counts = (
        sum(s.population for s in strata),
        sum(s.drawn for s in strata),
        sum(s.judged for s in strata),
        sum(s.agree for s in strata),
    )
    total = sum(s.population for s in used)
    if not used or total == 0:
        return Agreement(group, label, *counts, math.nan, math.nan, math.nan)
    p = var = 0.0
    for s in used:
        weight = s.population / total
        p_h = s.agree / s.judged
        p += weight * p_h
        fpc = max(0.0, 1 - s.judged / s.population)
        var += weight * weight * fpc * p_h * (1 - p_h) / s.judged
    p = min(1.0, max(0.0, p))
    if var > 0:
        low, high = wilson_interval(p, p * (1 - p) / var)
    elif all(s.judged >= s.population for s in used):
        low = high = p
    else:
        low, high = wilson_interval(p, sum(s.judged for s in used))
    return Agreement(group, label, *counts, p, low, high)


@dataclass(frozen=True)
class VerificationReport:
    """Per stratum, per inferred label (all topics) and overall agreement."""

    sample: Sample
    strata: list[StratumResult]
    rows: list[Agreement]
    calibration: list[tuple[str, int, float, float, float]] = field(
        default_factory=list
    )

    @property
    def overall(self) -> Agreement:
        """The stratum-weighted agreement over every stratum."""
        return self.rows[-1]

    def table(self) -> Table:
        """One row per stratum, then per label over all topics, then overall."""
        columns = (
            "topic",
            "inferred",
            "population",
            "drawn",
            "fraction",
            "judged",
            "agree",
            "agreement",
            "ci_low",
            "ci_high",
        )
        rows = [
            (
                a.group,
                a.label,
                a.population,
                a.drawn,
                a.drawn / a.population if a.population else 0.0,
                a.judged,
                a.agree,
                a.estimate,
                a.ci_low,
                a.ci_high,
            )
            for a in self.rows
        ]
        return Table("verification", columns, rows)

    def calibration_table(self) -> Table:
        """How calibrated the model's p was on the judged drawn documents."""
        return Table(
            "calibration",
            ("stratum", "judged", "mean_p", "observed_rate", "brier"),
            list(self.calibration),
        )


def verification_report(*, sample: Sample) -> VerificationReport:
    """Agreement of inferred and human labels on a verification sample."""
    if sample.method != Sample.Method.VERIFICATION:
        raise VerificationError(f"sample {sample.name} is not a verification sample")
    level = sample.pool.collection.relevance_level
    topics = dict(
        Topic.objects.filter(collection=sample.pool.collection_id).values_list(
            "qid", "pk"
        )
    )
    docs = dict(
        SampleDocument.objects.filter(sample=sample).values_list(
            "document__docno", "document_id"
        )
    )
    grades = human_grades([topics[q] for q in sample.draws if q in topics])
    strata: list[StratumResult] = []
    held: dict[str, list[tuple[float, int]]] = {}
    for qid in sorted(sample.draws, key=topic_key):
        for label, info in sample.draws[qid]["strata"].items():
            inferred = info.get("inferred") or {}
            agree = judged = 0
            for d in info["drawn"]:
                grade = grades.get((topics[qid], docs[d]))
                if grade is None:
                    continue
                judged += 1
                agree += (grade >= level) == inferred.get(d, label == "relevant")
                if "p" in info:
                    held.setdefault(label, []).append(
                        (float(info["p"][d]), int(grade >= level))
                    )
            strata.append(
                StratumResult(
                    qid, label, info["population"], len(info["drawn"]), judged, agree
                )
            )
    rows = [agreement_estimate(s.qid, s.label, [s]) for s in strata]
    labels = [
        *STRATA,
        *([UNCERTAIN] if any(s.label == UNCERTAIN for s in strata) else []),
    ]
    rows += [
        agreement_estimate("all", label, [s for s in strata if s.label == label])
        for label in labels
    ]
    rows.append(agreement_estimate("all", "all", strata))
    return VerificationReport(sample, strata, rows, _calibration(held))


def _calibration(
    held: Mapping[str, list[tuple[float, int]]],
) -> list[tuple[str, int, float, float, float]]:
    """Per stratum label and overall: judged documents, mean p, observed rate of
    relevance and Brier score (nothing without stored p)."""
    groups = [(label, held[label]) for label in sorted(held)]
    if groups:
        groups.append(("all", [pair for _, pairs in groups for pair in pairs]))
    out = []
    for label, pairs in groups:
        n = len(pairs)
        out.append(
            (
                label,
                n,
                sum(p for p, _ in pairs) / n,
                sum(y for _, y in pairs) / n,
                sum((p - y) ** 2 for p, y in pairs) / n,
            )
        )
    return out
