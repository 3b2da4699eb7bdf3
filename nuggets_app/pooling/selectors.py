"""Reads of pools, samples and assignments: an assessor's progress on assignments, the
inclusion probabilities of a sample's design."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

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
