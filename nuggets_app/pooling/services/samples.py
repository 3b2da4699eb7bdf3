"""Samples of a pool for judging: statAP (optionally steered by an automatic judge),
uniform or depth, with inclusion probabilities.

Each topic is drawn with its own generator seeded by ``"{seed}:{qid}"``, so a sample is
reproducible from its stored seed and does not depend on database ids or on which
other topics the pool holds. ``Sample.draws`` keeps, per qid, ``K`` (draws made), the
pool size, the number of distinct documents and how ``pi`` was obtained.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from nuggets_app.errors import DomainError
from nuggets_app.ir.judge_sampling import (
    DEFAULT_JUDGE_WEIGHT,
    check_judge_weight,
    draw_judge_shaped,
)
from nuggets_app.ir.sampling import (
    SamplingError,
    StatapDraw,
    draw_depth,
    draw_per_run_quota,
    draw_statap,
    draw_uniform,
)
from nuggets_app.models import (
    Judge,
    Judgment,
    Pool,
    PoolDocument,
    Sample,
    SampleDocument,
)
from nuggets_app.pooling.selectors import judge_strengths, sample_inclusion_by_topic
from nuggets_app.pooling.services.pools import Progress, pool_rankings, qid_sort_key

_BATCH = 5000


class SampleError(DomainError):
    """A sample cannot be drawn or extended as asked; the message says why."""


@dataclass
class _TopicPool:
    qid: str
    prior: dict[str, float]
    best_rank: dict[str, int]
    document_ids: dict[str, int]


def _topic_pools(pool: Pool) -> dict[int, _TopicPool]:
    rows = (
        PoolDocument.objects.filter(pool=pool)
        .values_list(
            "topic_id",
            "topic__qid",
            "document__docno",
            "document_id",
            "prior",
            "best_rank",
        )
        .iterator(chunk_size=20000)
    )
    topics: dict[int, _TopicPool] = {}
    for topic_id, qid, docno, document_id, prior, best_rank in rows:
        topic = topics.get(topic_id)
        if topic is None:
            topic = topics[topic_id] = _TopicPool(qid, {}, {}, {})
        topic.prior[docno] = prior
        topic.best_rank[docno] = best_rank
        topic.document_ids[docno] = document_id
    return topics


Strengths = dict[str, dict[str, float]]


def _draw(
    sample: Sample, size: int, topic: _TopicPool, rankings, strengths: Strengths
) -> StatapDraw:
    rng = random.Random(f"{sample.seed}:{topic.qid}")
    if sample.judge_id is not None:
        weight = sample.judge_weight
        if weight is None:
            weight = DEFAULT_JUDGE_WEIGHT
        return draw_judge_shaped(
            topic.prior, strengths.get(topic.qid, {}), size, rng, weight
        )
    if sample.method == Sample.Method.UNIFORM:
        return draw_uniform(topic.prior, size, rng)
    if sample.method == Sample.Method.DEPTH:
        return draw_depth(topic.best_rank, size, topic.prior)
    if sample.per_run_quota:
        return draw_per_run_quota(rankings, size, rng)
    return draw_statap(topic.prior, size, rng)


def _topic_draws(
    sample: Sample, size: int, progress: Progress | None
) -> Iterator[tuple[int, _TopicPool, StatapDraw]]:
    topics = _topic_pools(sample.pool)
    if not topics:
        raise SampleError(f"pool {sample.pool.name} is empty; build it first")
    quota_rankings = {}
    if sample.per_run_quota:
        quota_rankings = pool_rankings(
            runs=sample.pool.runs.all(), depth=sample.pool.depth
        )
    strengths = _sample_strengths(sample)
    ordered = sorted(topics.items(), key=lambda item: qid_sort_key(item[1].qid))
    for done, (topic_id, topic) in enumerate(ordered, start=1):
        rankings = quota_rankings[topic_id].rankings if sample.per_run_quota else None
        try:
            draw = _draw(sample, size, topic, rankings, strengths)
        except SamplingError as error:
            raise SampleError(f"topic {topic.qid}: {error}") from error
        yield topic_id, topic, draw
        if progress is not None:
            progress(done, len(topics))


def _sample_strengths(sample: Sample) -> Strengths:
    """The judge's strengths of relevance that shape the sample (none without one)."""
    if sample.judge is None:
        return {}
    strengths = judge_strengths(
        judge=sample.judge, level=sample.pool.collection.relevance_level
    )
    if strengths is None:
        raise SampleError(
            f"judge {sample.judge.name} gives scores outside [0, 1] and has no "
            "threshold to read them by; give it one to steer a sample",
            field="judge",
        )
    return strengths


def _judge_used(judge: Judge, by: str) -> None:
    # The labels that shaped a sample are its design: kept read-only from now on, as
    # every result that reads them (nuggets_app.judges.services.judge_mark_used).
    Judge.objects.filter(pk=judge.pk, used_at__isnull=True).update(
        used_at=timezone.now(), used_by=by[:200]
    )


def _draw_record(topic: _TopicPool, draw: StatapDraw) -> dict:
    record = {
        "draws": draw.draws,
        "pool_size": len(topic.prior),
        "distinct": len(draw.order),
        "pi": draw.pi_method,
    }
    if draw.run_draws:
        record["run_draws"] = draw.run_draws
    return record


# Verification samples are drawn from a matching job's strata (evaluation/services/verification.py),
# never from the pool's sampling distribution.
DRAWABLE_METHODS = [m for m in Sample.Method.values if m not in Sample.NOT_STATAP]


def _check_judge(
    pool: Pool, method: str, per_run_quota: bool, judge: Judge | None, weight: float
) -> None:
    if judge is None:
        return
    if method != Sample.Method.STATAP or per_run_quota:
        raise SampleError(
            "a judge steers the statap method only, without a per-run quota",
            field="judge",
        )
    if judge.collection_id != pool.collection_id:
        raise SampleError(
            f"judge {judge.name} belongs to another collection than pool {pool.name}",
            field="judge",
        )
    try:
        check_judge_weight(weight)
    except SamplingError as error:
        raise SampleError(str(error), field="judge_weight") from None


def _check_request(method: str, size: int, per_run_quota: bool) -> None:
    if method not in DRAWABLE_METHODS:
        raise SampleError(
            f"unknown method {method!r}; choose one of {', '.join(DRAWABLE_METHODS)}"
        )
    if size < 1:
        raise SampleError(f"size must be at least 1, got {size}")
    if per_run_quota and method != Sample.Method.STATAP:
        raise SampleError(
            "a per-run quota applies to the statap method only", field="per_run_quota"
        )


def sample_draw(
    *,
    pool: Pool,
    size: int,
    method: str,
    seed: int,
    name: str,
    per_run_quota: bool = False,
    judge: Judge | None = None,
    judge_weight: float | None = None,
    progress: Progress | None = None,
) -> Sample:
    """Draw ``size`` distinct documents per topic of ``pool`` (docs/reference/algorithms.md 1.3).

    Stores every sampled document with its inclusion probability and its queue order
    (order of first draw; best rank first for ``depth``). With a ``judge`` (statAP
    only), the distribution mixes statAP's prior with the judge's labels at
    ``judge_weight`` (default ``DEFAULT_JUDGE_WEIGHT``) and ``size`` is the expected
    number of distinct documents, every π exact (:mod:`nuggets_app.ir.judge_sampling`).
    Drawing again under the same name with the same parameters returns the existing
    sample unchanged; other parameters under a taken name are refused.
    """
    _check_request(method, size, per_run_quota)
    if judge is None and judge_weight is not None:
        raise SampleError("a judge's weight needs a judge", field="judge_weight")
    weight = DEFAULT_JUDGE_WEIGHT if judge_weight is None else judge_weight
    _check_judge(pool, method, per_run_quota, judge, weight)
    wanted = {
        "method": method,
        "size": size,
        "seed": seed,
        "per_run_quota": per_run_quota,
        "judge": judge,
        "judge_weight": weight if judge is not None else None,
    }
    with transaction.atomic():
        existing = Sample.objects.filter(pool=pool, name=name).first()
        if existing is not None:
            stored = {key: getattr(existing, key) for key in wanted}
            if stored != wanted:
                raise SampleError(
                    f"sample {name} of pool {pool.name} exists with other parameters "
                    f"({stored}); choose a new name"
                )
            return existing
        sample = Sample.objects.create(pool=pool, name=name, **wanted)
        if judge is not None:
            _judge_used(judge, f"sample {name} of pool {pool.name}")
        rows: list[SampleDocument] = []
        for topic_id, topic, draw in _topic_draws(sample, size, progress):
            sample.draws[topic.qid] = _draw_record(topic, draw)
            rows.extend(
                SampleDocument(
                    sample=sample,
                    topic_id=topic_id,
                    document_id=topic.document_ids[docno],
                    inclusion_prob=draw.inclusion[docno],
                    order=position,
                )
                for position, docno in enumerate(draw.order, start=1)
            )
        SampleDocument.objects.bulk_create(rows, batch_size=_BATCH)
        sample.save(update_fields=["draws"])
    return sample


def sample_extend(
    *, sample: Sample, extra: int, progress: Progress | None = None
) -> Sample:
    """Add ``extra`` distinct documents per topic, continuing the same seeded draws.

    The draws of the original sample are repeated (same seed) and continued, so the
    queue keeps its order and new documents go to its end; every inclusion probability
    is recomputed with the new ``K``.
    """
    if extra < 1:
        raise SampleError(f"extra must be at least 1, got {extra}")
    if sample.method not in DRAWABLE_METHODS:
        raise SampleError(
            f"sample {sample.name} is a {sample.method} sample; draw a new one instead"
        )
    size = sample.size + extra
    with transaction.atomic():
        sample = Sample.objects.select_for_update().get(pk=sample.pk)
        # The whole queue: known answers interleaved in it hold positions too, and
        # one the sampler now draws becomes a drawn document.
        existing: dict[tuple[int, int], SampleDocument] = {
            (row.topic_id, row.document_id): row
            for row in SampleDocument.queue.filter(sample=sample)
        }
        last_order: dict[int, int] = {}
        for (topic_id, _), item in existing.items():
            last_order[topic_id] = max(last_order.get(topic_id, 0), item.order)
        changed: list[SampleDocument] = []
        drawn_checks: list[SampleDocument] = []
        added: list[SampleDocument] = []
        for topic_id, topic, draw in _topic_draws(sample, size, progress):
            sample.draws[topic.qid] = _draw_record(topic, draw)
            for docno in draw.order:
                key = (topic_id, topic.document_ids[docno])
                row = existing.get(key)
                if row is not None:
                    row.inclusion_prob = draw.inclusion[docno]
                    changed.append(row)
                    if row.known:
                        drawn_checks.append(row)
                    continue
                last_order[topic_id] = last_order.get(topic_id, 0) + 1
                added.append(
                    SampleDocument(
                        sample=sample,
                        topic_id=topic_id,
                        document_id=key[1],
                        inclusion_prob=draw.inclusion[docno],
                        order=last_order[topic_id],
                    )
                )
        SampleDocument.queue.bulk_update(changed, ["inclusion_prob"], batch_size=_BATCH)
        _checks_drawn(drawn_checks)
        SampleDocument.objects.bulk_create(added, batch_size=_BATCH)
        sample.size = size
        sample.save(update_fields=["size", "draws"])
    return sample


def sample_inclusion(sample: Sample) -> dict[tuple[str, str], float]:
    """``(qid, docno) -> inclusion_prob`` of every sampled document (for prels)."""
    by_topic = sample_inclusion_by_topic(sample=sample)
    return {
        (qid, d): prob for qid, docs in by_topic.items() for d, prob in docs.items()
    }


def _checks_drawn(rows: list[SampleDocument]) -> None:
    """Known answers the sampler drew: drawn documents from now on, and the grades
    given to them human labels (the assessors could not tell them apart). An
    assessor who already labelled the document elsewhere keeps that label, and the
    check stays a check."""
    if not rows:
        return
    SampleDocument.queue.filter(pk__in=[r.pk for r in rows]).update(known=False)
    for row in rows:
        labelled = Judgment.objects.filter(
            topic_id=row.topic_id, document_id=row.document_id, quality_check=False
        ).values("assessor_id")
        Judgment.objects.filter(
            topic_id=row.topic_id, document_id=row.document_id, quality_check=True
        ).exclude(assessor_id__in=labelled).update(quality_check=False)
