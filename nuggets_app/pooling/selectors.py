"""Reads of pools, samples and assignments: an assessor's progress on assignments, the
inclusion probabilities of a sample's design, who may be given real work, and the
workload page's figures.

Who may be given real work: people, not the simulation's stand-ins. An experiment
(``manage.py simulate``) judges through the product's own path as a user named
``simulated-assessor``. Such users are marked by membership of the group
:data:`SIMULATED_GROUP` (whatever their name;
:mod:`nuggets_app.pooling.services.simulated_assessors` marks them), and are left out
of the assessors the staff pages offer and refused by the assignment services.

The workload page (:func:`workload`): per assessor and sample, the documents
assigned, judged and remaining, time on task, the judging rate, and when the work
should be done at the pace kept so far.

The estimate of completion: an assessor's rate is judged documents per hour of
active time (``Judgment.active_seconds``, idle time not counted); the remaining
documents at that rate give the hours of work left; the pace of the last
``PACE_DAYS`` days (judgments per calendar day) turns them into a date. A sample is
done when its slowest assessor is, so its estimate is the latest of theirs.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.utils import timezone

from nuggets_app.ir.judge_sampling import (
    DEFAULT_JUDGE_WEIGHT,
    judge_shaped_distribution,
)
from nuggets_app.ir.judge_values import judge_cut, label_value, relevance_strength
from nuggets_app.ir.sampling import PI_CENSUS, inclusion_probabilities
from nuggets_app.models import (
    Assignment,
    Judge,
    JudgeLabel,
    Judgment,
    Nugget,
    PoolDocument,
    Sample,
    SampleDocument,
)

Inclusion = dict[str, dict[str, float]]  # qid -> docno -> π


def sample_inclusion_by_topic(*, sample: Sample) -> Inclusion:
    """π of every drawn document of the sample (the estimators' stored π)."""
    probs: Inclusion = {}
    rows = SampleDocument.objects.filter(sample=sample).values_list(
        "topic__qid", "document__docno", "inclusion_prob"
    )
    for qid, docno, prob in rows.iterator(chunk_size=5000):
        probs.setdefault(qid, {})[docno] = prob
    return probs


def judge_strengths(*, judge: Judge, level: int) -> Inclusion | None:
    """qid -> docno -> the judge's strength of relevance in [0, 1] at the relevance
    ``level`` (:func:`nuggets_app.ir.judge_values.relevance_strength`); None when
    the judge gives scores outside [0, 1] and has no threshold to read them by."""
    values: Inclusion = {}
    rows = JudgeLabel.objects.filter(judge=judge).values_list(
        "topic__qid", "docno", "grade", "score", "probabilities"
    )
    for qid, docno, grade, score, probs in rows.iterator(chunk_size=5000):
        value = label_value(judge.kind, grade, score, probs, level)
        if value is not None:
            values.setdefault(qid, {})[docno] = value
    every = (v for docs in values.values() for v in docs.values())
    cut = judge_cut(judge.kind, every, level, judge.threshold)
    if cut is None:
        return None
    return {
        qid: {
            d: relevance_strength(v, kind=judge.kind, cut=cut) for d, v in docs.items()
        }
        for qid, docs in values.items()
    }


def sample_distribution(
    *, sample: Sample, priors: Inclusion, strengths: Inclusion | None = None
) -> Inclusion:
    """The distribution each topic was drawn from: the pool's statAP prior, or for a
    judge-shaped sample the mixture with the judge's shape (``strengths``: read from
    the sample's judge when not given)."""
    judge = sample.judge
    if judge is None:
        return priors
    if strengths is None:
        level = sample.pool.collection.relevance_level
        strengths = judge_strengths(judge=judge, level=level) or {}
    weight = sample.judge_weight
    if weight is None:
        weight = DEFAULT_JUDGE_WEIGHT
    return {
        qid: judge_shaped_distribution(prior, strengths.get(qid, {}), weight)
        for qid, prior in priors.items()
        if prior
    }


def sample_design(*, sample: Sample) -> Inclusion:
    """π of every pooled document under the sample's design, drawn or not.

    A one-shot statAP sample without run quotas: ``1 - (1 - p(d))^K`` from the
    sampling distribution p (``PoolDocument.prior``, mixed with the judge's shape for
    a judge-shaped sample: :func:`sample_distribution`) and the topic's draws K kept
    with the sample (1 for every document of a census); a uniform sample:
    ``distinct / pool size``. Other designs (depth, run quotas, rounds, verification)
    give the drawn documents only. Drawn documents keep their stored π.
    """
    drawn = sample_inclusion_by_topic(sample=sample)
    plain = sample.rounds == 1 and not sample.per_run_quota
    methods = (Sample.Method.STATAP, Sample.Method.UNIFORM)
    if not plain or sample.method not in methods:
        return drawn
    priors: Inclusion = {}
    rows = PoolDocument.objects.filter(pool=sample.pool_id).values_list(
        "topic__qid", "document__docno", "prior"
    )
    for qid, docno, prior in rows.iterator(chunk_size=20000):
        priors.setdefault(qid, {})[docno] = prior
    priors = sample_distribution(sample=sample, priors=priors)
    design: Inclusion = {}
    for qid, topic_priors in priors.items():
        record = sample.draws.get(qid) or {}
        if record.get("pi") == PI_CENSUS:
            design[qid] = dict.fromkeys(topic_priors, 1.0)
        elif sample.method == Sample.Method.UNIFORM and topic_priors:
            share = record.get("distinct", 0) / len(topic_priors)
            design[qid] = dict.fromkeys(topic_priors, share)
        elif "draws" in record and all(0 < p < 1 for p in topic_priors.values()):
            design[qid] = inclusion_probabilities(topic_priors, int(record["draws"]))
        design[qid] = {**design.get(qid, {}), **drawn.get(qid, {})}
    return design


@dataclass
class Progress:
    """One assignment's progress for its assessor."""

    assignment: Assignment
    total: int = 0
    judged: int = 0
    relevant: int = 0
    nuggets: int = 0
    active_seconds: float = 0.0
    resume_position: int | None = None

    @property
    def to_judge(self) -> int:
        return self.total - self.judged


def assignment_progress(*, assignments: Iterable[Assignment]) -> list[Progress]:
    """Progress of each assignment (3 queries for any number of assignments)."""
    rows = [Progress(a) for a in assignments]
    if not rows:
        return rows
    by_key = {(p.assignment.sample_id, p.assignment.topic_id): p for p in rows}
    assessor_ids = {p.assignment.assessor_id for p in rows}
    topic_ids = {p.assignment.topic_id for p in rows}
    queue: dict[tuple[int, int], list[tuple[int, int, bool]]] = defaultdict(list)
    # The whole queue the assessor sees, known answers included.
    for sample_id, topic_id, order, doc_id, known in SampleDocument.queue.filter(
        sample_id__in={k[0] for k in by_key}, topic_id__in=topic_ids
    ).values_list("sample_id", "topic_id", "order", "document_id", "known"):
        if (sample_id, topic_id) in by_key:
            queue[(sample_id, topic_id)].append((order, doc_id, known))
    # Keyed by document and role: a known answer's check is not its label.
    judgments: dict[tuple[int, int], dict[tuple[int, bool], tuple[int | None, float]]]
    judgments = defaultdict(dict)
    for topic_id, assessor_id, doc_id, check, rel, secs in Judgment.objects.filter(
        topic_id__in=topic_ids, assessor_id__in=assessor_ids
    ).values_list(
        "topic_id",
        "assessor_id",
        "document_id",
        "quality_check",
        "relevance",
        "active_seconds",
    ):
        judgments[(topic_id, assessor_id)][(doc_id, check)] = (rel, secs)
    # Nuggets per document: an assignment counts those of its own queue's documents
    # (a top-up and the topic's first sample share the topic, not the documents).
    nugget_counts: dict[tuple[int, int, int], int] = defaultdict(int)
    for topic_id, assessor_id, doc_id in Nugget.objects.filter(
        topic_id__in=topic_ids, assessor_id__in=assessor_ids
    ).values_list("topic_id", "assessor_id", "document_id"):
        nugget_counts[(topic_id, assessor_id, doc_id)] += 1
    for key, progress in by_key.items():
        a = progress.assignment
        level = a.topic.collection.relevance_level
        mine = judgments[(a.topic_id, a.assessor_id)]
        progress.nuggets = sum(
            nugget_counts[(a.topic_id, a.assessor_id, doc_id)]
            for _, doc_id, _ in queue[key]
        )
        for order, doc_id, known in sorted(queue[key]):
            progress.total += 1
            rel, secs = mine.get((doc_id, known), (None, 0.0))
            progress.active_seconds += secs
            if rel is None:
                if progress.resume_position is None:
                    progress.resume_position = order
                continue
            progress.judged += 1
            progress.relevant += rel >= level
    return rows


# --- who may be given real work -------------------------------------------------
SIMULATED_GROUP = "simulated assessors"


def is_simulated(user: Any) -> bool:
    """Whether ``user`` is a simulated assessor."""
    return user.groups.filter(name=SIMULATED_GROUP).exists()


def assessor_choices() -> QuerySet:
    """The active users who can be assigned topics, by username: not simulated ones."""
    return (
        get_user_model()
        .objects.filter(is_active=True)
        .exclude(groups__name=SIMULATED_GROUP)
        .order_by("username")
    )


# --- the workload page ------------------------------------------------------------
PACE_DAYS = 7


@dataclass
class AssessorLoad:
    """One assessor's work in one sample."""

    username: str
    assigned: int = 0
    judged: int = 0
    active_seconds: float = 0.0
    recent: int = 0

    @property
    def remaining(self) -> int:
        return self.assigned - self.judged

    @property
    def active_hours(self) -> float:
        return self.active_seconds / 3600

    @property
    def per_hour(self) -> float:
        """Judged documents per hour of active time (NaN before any time)."""
        return (
            self.judged * 3600 / self.active_seconds
            if self.active_seconds
            else math.nan
        )

    @property
    def hours_left(self) -> float:
        """Hours of active work left at this rate (0 when done, NaN without a rate)."""
        if not self.remaining:
            return 0.0
        rate = self.per_hour
        return self.remaining / rate if rate and not math.isnan(rate) else math.nan

    @property
    def days_left(self) -> float:
        """Calendar days left at the pace of the last ``PACE_DAYS`` days (NaN when
        nothing was judged then)."""
        if not self.remaining:
            return 0.0
        per_day = self.recent / PACE_DAYS
        return self.remaining / per_day if per_day else math.nan


@dataclass
class SampleLoad:
    """A sample's assessors and its estimated completion."""

    sample: Sample
    assessors: list[AssessorLoad] = field(default_factory=list)

    @property
    def remaining(self) -> int:
        return sum(a.remaining for a in self.assessors)

    @property
    def done_by(self) -> dt.date | None:
        """The day the slowest assessor should finish; None when some assessor with
        work left has no recent pace (the estimate would be a guess)."""
        days = [a.days_left for a in self.assessors]
        if any(math.isnan(d) for d in days):
            return None
        return (timezone.now() + dt.timedelta(days=max(days, default=0))).date()

    @property
    def hours_left(self) -> float:
        return max((a.hours_left for a in self.assessors), default=0.0)


def workload(*, samples: Iterable[Sample] | None = None) -> list[SampleLoad]:
    """Per sample with assignments (of ``samples`` when given) and assessor, the
    work assigned, done and left; four queries per assessor."""
    assignments = Assignment.objects.select_related(
        "sample", "assessor", "topic", "topic__collection"
    ).order_by("sample_id", "assessor__username", "topic_id")
    if samples is not None:
        assignments = assignments.filter(sample__in=list(samples))
    # assignment_progress reads one assessor's queues (keyed by sample and topic):
    # asked once per assessor, as several may share a topic.
    by_assessor: dict[int, list[Assignment]] = defaultdict(list)
    for assignment in assignments:
        by_assessor[assignment.assessor_id].append(assignment)
    progress = [
        p
        for group in by_assessor.values()
        for p in assignment_progress(assignments=group)
    ]
    since = timezone.now() - dt.timedelta(days=PACE_DAYS)
    recent: dict[tuple[int, int], int] = defaultdict(int)
    for topic_id, assessor_id in Judgment.objects.filter(
        topic_id__in={p.assignment.topic_id for p in progress},
        relevance__isnull=False,
        updated_at__gte=since,
    ).values_list("topic_id", "assessor_id"):
        recent[(topic_id, assessor_id)] += 1
    by_sample: dict[int, SampleLoad] = {}
    loads: dict[tuple[int, int], AssessorLoad] = {}
    for p in progress:
        a = p.assignment
        sample = by_sample.setdefault(a.sample_id, SampleLoad(a.sample))
        key = (a.sample_id, a.assessor_id)
        if key not in loads:
            loads[key] = AssessorLoad(a.assessor.get_username())
            sample.assessors.append(loads[key])
        load = loads[key]
        load.assigned += p.total
        load.judged += p.judged
        load.active_seconds += p.active_seconds
        load.recent += min(recent[(a.topic_id, a.assessor_id)], p.judged)
    return list(by_sample.values())
