"""Top-up samples: judging a new run's documents outside the pool to make its figure
exact (the design and estimator: :mod:`nuggets_app.ir.outside_pool`).

A top-up is a :class:`~nuggets_app.models.Sample` of method ``top_up`` tied to the kept
new run (``Sample.new_run``), in the job's pool's name space but drawing documents
outside the pool: per topic, ``size`` draws with replacement from the AP-prior weights
of the run's ranks, kept for its unpooled documents (those scored for the job, down to
the pool's depth), with exact inclusion probabilities. It is assigned through the usual
queues (the assessors of the job's sample for each topic, unless others are given);
its judgments are ordinary judgments of the collection, so exports and later
evaluations see them. Once every document of a topic is judged, the run's estimate
uses them for that topic (:func:`stored_top_ups`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.db import transaction

from nuggets_app.evaluation.services.estimates import EstimateError, estimate_sample
from nuggets_app.evaluation.services.outside_pool import TopUp
from nuggets_app.importers.fields import qid_key
from nuggets_app.ir.model_assisted import ranked
from nuggets_app.ir.outside_pool import top_up_draw
from nuggets_app.judging.selectors import human_grades
from nuggets_app.models import (
    Assignment,
    Document,
    JobNewRun,
    MatchJob,
    Sample,
    SampleDocument,
    Topic,
    UnpooledScore,
)
from nuggets_app.pooling.services.assignments import assignment_create

TOP_UP_MAX = 200  # draws per topic


@dataclass(frozen=True)
class TopUpStatus:
    """A top-up sample and how much of it is judged."""

    sample: Sample
    documents: int
    judged: int
    topics: int
    topics_judged: int
    # {qid: [docno, ...]}: the documents a topic's correction still waits for.
    waiting: dict[str, list[str]] = field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.judged == self.documents


def _job_pool(job: MatchJob):
    if job.pool_id is not None:
        return job.pool
    return job.sample.pool if job.sample is not None else None


def run_unpooled_lists(
    *, job: MatchJob, run: JobNewRun
) -> dict[Topic, tuple[list[str], dict[str, int]]]:
    """Per topic of the job the run answers: its list down to the pool's depth and
    its unpooled documents scored for the job (docno -> document id)."""
    pool = _job_pool(job)
    depth = pool.depth if pool is not None else None
    topics = {t.qid: t for t in job.topics.all()}
    lists = {
        topics[qid]: ranked(docs, depth)
        for qid, docs in run.scores.items()
        if qid in topics
    }
    docnos = {d for ranking in lists.values() for d in ranking}
    ids = dict(
        Document.objects.filter(
            collection_id=job.collection_id, docno__in=sorted(docnos)
        ).values_list("docno", "pk")
    )
    scored = set(
        UnpooledScore.objects.filter(
            job=job, topic__in=list(lists), document_id__in=list(ids.values())
        ).values_list("topic_id", "document_id")
    )
    return {
        topic: (
            ranking,
            {d: ids[d] for d in ranking if (topic.pk, ids.get(d)) in scored},
        )
        for topic, ranking in lists.items()
    }


def top_up_draw_sample(
    *,
    job: MatchJob,
    run: JobNewRun,
    size: int,
    seed: int = 1,
    assessors: Sequence | None = None,
) -> Sample:
    """Draw and assign a top-up sample of ``size`` draws per topic of the run's
    unpooled documents (at most ``size`` distinct ones per topic). ``assessors``:
    every topic to each of them; default: a topic goes to the assessors assigned it
    in the job's sample."""
    if not 1 <= size <= TOP_UP_MAX:
        raise EstimateError(
            f"the top-up size must be between 1 and {TOP_UP_MAX} draws per topic, "
            f"got {size}",
            field="size",
        )
    pool = _job_pool(job)
    if pool is None:
        raise EstimateError(f"job {job.pk} has no pool to top up")
    lists = run_unpooled_lists(job=job, run=run)
    if not any(unpooled for _, unpooled in lists.values()):
        raise EstimateError(
            f"run {run.name} has no scored document outside the pool of job {job.pk}: "
            "nothing to top up (evaluate it first, or it rests on pooled documents "
            "only)"
        )
    rng = random.Random(seed)
    count = run.top_ups.count() + 1
    with transaction.atomic():
        sample = Sample.objects.create(
            pool=pool,
            name=f"top-up {count} of {run.name} (job {job.pk})"[:200],
            method=Sample.Method.TOP_UP,
            size=size,
            seed=seed,
            new_run=run,
        )
        rows = []
        for topic in sorted(lists, key=lambda t: t.pk):
            ranking, unpooled = lists[topic]
            draw = top_up_draw(ranking, unpooled, size, rng)
            if draw is None:
                continue
            sample.draws[topic.qid] = {
                "draws": draw.draws,
                "pool_size": len(unpooled),
                "distinct": len(draw.order),
                "pi": draw.pi_method,
            }
            rows += [
                SampleDocument(
                    sample=sample,
                    topic=topic,
                    document_id=unpooled[docno],
                    inclusion_prob=draw.inclusion[docno],
                    order=order,
                )
                for order, docno in enumerate(draw.order, 1)
            ]
        SampleDocument.objects.bulk_create(rows)
        sample.save(update_fields=["draws"])
        _assign(sample, job, assessors)
    return sample


def _assign(sample: Sample, job: MatchJob, assessors: Sequence | None) -> None:
    topics = list(
        Topic.objects.filter(
            pk__in=SampleDocument.objects.filter(sample=sample).values("topic_id")
        )
    )
    if assessors:
        assignment_create(
            sample=sample, assessors=list(assessors), topics=topics, overlap=1
        )
        return
    usual = Assignment.objects.filter(
        sample__pool=sample.pool, topic__in=topics
    ).exclude(sample__method=Sample.Method.TOP_UP)
    own = estimate_sample(job)
    if own is not None:
        usual = usual.filter(sample=own)
    by_topic: dict[int, list] = {}
    for row in usual.select_related("assessor").order_by("pk"):
        if row.assessor not in by_topic.setdefault(row.topic_id, []):
            by_topic[row.topic_id].append(row.assessor)
    missing = [t.qid for t in topics if not by_topic.get(t.pk)]
    if missing:
        raise EstimateError(
            f"no assessor is assigned topic {missing[0]} in the job's sample: name "
            "the assessors of the top-up"
        )
    Assignment.objects.bulk_create(
        [
            Assignment(sample=sample, topic=t, assessor=a)
            for t in topics
            for a in by_topic[t.pk][:1]
        ],
        ignore_conflicts=True,
    )


def top_up_statuses(*, run: JobNewRun) -> list[TopUpStatus]:
    """The run's top-up samples, newest first, with their judged documents."""
    out = []
    for sample in run.top_ups.order_by("-pk"):
        rows = list(
            SampleDocument.objects.filter(sample=sample)
            .order_by("topic__qid", "order")
            .values_list("topic_id", "document_id", "topic__qid", "document__docno")
        )
        grades = human_grades({r[0] for r in rows})
        waiting: dict[str, list[str]] = {}
        for topic_id, doc_id, qid, docno in rows:
            if (topic_id, doc_id) not in grades:
                waiting.setdefault(qid, []).append(docno)
        topics = {r[2] for r in rows}
        judged = len(rows) - sum(len(docs) for docs in waiting.values())
        out.append(
            TopUpStatus(
                sample,
                len(rows),
                judged,
                len(topics),
                len(topics) - len(waiting),
                dict(sorted(waiting.items(), key=lambda kv: qid_key(kv[0]))),
            )
        )
    return out


def stored_top_ups(*, job: MatchJob, names: Iterable[str]) -> dict[str, TopUp]:
    """``{run: {qid: {docno: (grade, π)}}}``: each kept new run's top-up documents of
    the topics whose top-up documents are all judged (the newest sample covering a
    topic; a topic with an unjudged one waits)."""
    runs = JobNewRun.objects.filter(job=job, name__in=list(names))
    out: dict[str, TopUp] = {}
    for run in runs:
        found: dict[str, dict[str, tuple[int, float]]] = {}
        for sample in run.top_ups.order_by("-pk"):
            rows = list(
                SampleDocument.objects.filter(sample=sample).values_list(
                    "topic_id",
                    "topic__qid",
                    "document_id",
                    "document__docno",
                    "inclusion_prob",
                )
            )
            grades = human_grades({r[0] for r in rows})
            by_topic: dict[str, list] = {}
            for row in rows:
                by_topic.setdefault(row[1], []).append(row)
            for qid, docs in by_topic.items():
                if qid in found or any((t, d) not in grades for t, _, d, _, _ in docs):
                    continue
                found[qid] = {dn: (grades[(t, d)], pi) for t, _, d, dn, pi in docs}
        if found:
            out[run.name] = found
    return out
