"""What the trust and verification pages of ``bench_dashboards`` need on the benchmark
collection, made once: a pool of every run, a judged statAP sample with nuggets for a
few topics, a finished matching job over the pool, and a judged verification sample.

Judgments and nuggets come from the collection's imported qrels (a simulated assessor:
relevant if the qrels list the document); the nuggets are the first
sentence of each topic's first relevant sampled documents. Every step finds what an
earlier run made under the same names and reuses it.
"""

from __future__ import annotations

from dataclasses import dataclass

from nuggets_app.evaluation.selectors import stored_qrels
from nuggets_app.evaluation.services.verification import verification_queue_create
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.matching import (
    MatchParams,
    match_job_finish_here,
    match_job_launch,
)
from nuggets_app.ir.prels import topic_key
from nuggets_app.models import (
    Collection,
    Judgment,
    MatchJob,
    Nugget,
    Qrels,
    Run,
    Sample,
    SampleDocument,
    Topic,
)
from nuggets_app.pooling.services.pools import pool_build
from nuggets_app.pooling.services.samples import sample_draw

JOB = "bench-trust"
DEPTH, SAMPLE_SIZE, NUGGETS_PER_TOPIC = 10, 20, 2


@dataclass(frozen=True)
class DashboardWorld:
    job: MatchJob
    verification: Sample
    topics: int
    judgments: int


def dashboard_world(
    *, collection: Collection, qrels: Qrels, assessor, topics: int
) -> DashboardWorld:
    """The job and verification sample of the module docstring, made if missing."""
    truth = stored_qrels(qrels)
    job = (
        MatchJob.objects.filter(
            collection=collection, name=JOB, status=MatchJob.Status.DONE
        )
        .order_by("-pk")
        .first()
    )
    if job is None:
        job = _job(collection, truth, assessor, topics)
    verification = verification_queue_create(
        job=job,
        rule=DecisionRule(threshold=0.5),
        relevant=10,
        nonrelevant=5,
        seed=1,
        assessors=[assessor],
        name="bench-verify",
    )
    _judge(verification, truth, assessor)
    judged = Judgment.objects.filter(topic__collection=collection).count()
    return DashboardWorld(job, verification, job.topics.count(), judged)


def _job(collection: Collection, truth, assessor, count: int) -> MatchJob:
    pool = pool_build(
        collection=collection,
        runs=Run.objects.filter(collection=collection),
        depth=DEPTH,
        name=f"bench-depth{DEPTH}",
    )
    sample = sample_draw(
        pool=pool,
        size=SAMPLE_SIZE,
        method=Sample.Method.STATAP,
        seed=1,
        name=f"bench-statap{SAMPLE_SIZE}",
    )
    qids = sorted(
        (q for q in truth if any(r > 0 for r in truth[q].values())), key=topic_key
    )[:count]
    topics = list(Topic.objects.filter(collection=collection, qid__in=qids))
    # Nuggets once: a job left unfinished by an earlier run already made them.
    made = Nugget.objects.filter(topic__collection=collection, assessor=assessor)
    _judge(sample, truth, assessor, qids=set(qids), nuggets=not made.exists())
    job = match_job_launch(
        collection=collection,
        topics=topics,
        source=MatchJob.Source.POOL,
        pool=pool,
        name=JOB,
        params=MatchParams(nugget_filter={"assessors": [assessor.pk]}),
    )
    # Without a broker the chunks ran in this process; one left behind runs here.
    job = match_job_finish_here(job)
    if job.status != MatchJob.Status.DONE:
        raise RuntimeError(f"matching job {job.pk} ended {job.status}: {job.error}")
    return job


def _judge(
    sample: Sample,
    truth,
    assessor,
    *,
    qids: set[str] | None = None,
    nuggets: bool = False,
) -> None:
    """Judge the sample's documents (of ``qids``) from the qrels; with ``nuggets``,
    highlight the first sentence of each topic's first relevant documents."""
    rows = SampleDocument.objects.filter(sample=sample).select_related(
        "topic", "document"
    )
    if qids is not None:
        rows = rows.filter(topic__qid__in=qids)
    judgments, highlights, per_topic = [], [], {}
    for row in rows.order_by("topic__qid", "order"):
        # Binary, as the collection's default scale: listed in the qrels = relevant.
        grade = int(truth.get(row.topic.qid, {}).get(row.document.docno, 0) > 0)
        judgments.append(
            Judgment(
                topic=row.topic,
                document=row.document,
                assessor=assessor,
                relevance=grade,
            )
        )
        text = row.document.text
        if not (nuggets and grade > 0 and text):
            continue
        if per_topic.get(row.topic.qid, 0) < NUGGETS_PER_TOPIC:
            end = text.find(" . ") + 1 or len(text)
            highlights.append(
                Nugget(
                    topic=row.topic,
                    assessor=assessor,
                    document=row.document,
                    start=0,
                    end=end,
                    span_text=text[:end],
                    text=text[:end],
                    grade=1,
                )
            )
            per_topic[row.topic.qid] = per_topic.get(row.topic.qid, 0) + 1
    Judgment.objects.bulk_create(judgments, ignore_conflicts=True, batch_size=1000)
    Nugget.objects.bulk_create(highlights, batch_size=1000)
