"""Read-only views of a collection for the staff pages: counts, per-topic pool and
sample sizes, and assessors' progress on a sample."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Count, Q

from nuggets_app.models import (
    Assignment,
    Collection,
    Document,
    MatchJob,
    Pool,
    PoolDocument,
    Qrels,
    Run,
    Sample,
    SampleDocument,
    TaskRecord,
    Topic,
)
from nuggets_app.pooling.selectors import Progress, assignment_progress
from nuggets_app.pooling.services.pools import qid_sort_key


def collection_counts(collection: Collection) -> dict[str, int]:
    """How many of each thing the collection holds."""
    return {
        "documents": Document.objects.filter(collection=collection).count(),
        "topics": Topic.objects.filter(collection=collection).count(),
        "runs": Run.objects.filter(collection=collection).count(),
        "qrels": Qrels.objects.filter(collection=collection).count(),
        "pools": Pool.objects.filter(collection=collection).count(),
        "samples": Sample.objects.filter(pool__collection=collection).count(),
        "assignments": Assignment.objects.filter(topic__collection=collection).count(),
        "jobs": MatchJob.objects.filter(collection=collection).count(),
        "tasks": TaskRecord.objects.filter(collection=collection).count(),
    }


def collection_list() -> list[dict]:
    """Every collection with its document, topic and run counts."""
    rows = Collection.objects.annotate(
        n_topics=Count("topics", distinct=True), n_runs=Count("runs", distinct=True)
    )
    docs = dict(
        Document.objects.values("collection_id")
        .annotate(n=Count("id"))
        .values_list("collection_id", "n")
    )
    return [
        {
            "collection": c,
            "documents": docs.get(c.pk, 0),
            "topics": c.n_topics,
            "runs": c.n_runs,
        }
        for c in rows
    ]


@dataclass
class TopicSizes:
    qid: str
    pool: int
    single_run: int
    samples: list[int] = field(default_factory=list)


def pool_topic_sizes(pool: Pool, samples: list[Sample]) -> list[TopicSizes]:
    """Per topic: pool size, documents from a single run, and each sample's size."""
    rows = {
        qid: TopicSizes(qid, size, single)
        for qid, size, single in PoolDocument.objects.filter(pool=pool)
        .values("topic__qid")
        .annotate(size=Count("id"), single=Count("id", filter=Q(num_runs=1)))
        .values_list("topic__qid", "size", "single")
    }
    per_sample: dict[int, dict[str, int]] = defaultdict(dict)
    for sample_id, qid, n in (
        SampleDocument.objects.filter(sample__in=samples)
        .values("sample_id", "topic__qid")
        .annotate(n=Count("id"))
        .values_list("sample_id", "topic__qid", "n")
    ):
        per_sample[sample_id][qid] = n
    for row in rows.values():
        row.samples = [per_sample[s.pk].get(row.qid, 0) for s in samples]
    return sorted(rows.values(), key=lambda row: qid_sort_key(row.qid))


@dataclass
class AssessorProgress:
    username: str
    user_id: int
    assignments: list[Progress]

    @property
    def topics(self) -> int:
        return len(self.assignments)

    @property
    def finished(self) -> int:
        return sum(1 for p in self.assignments if p.total and p.to_judge == 0)

    @property
    def judged(self) -> int:
        return sum(p.judged for p in self.assignments)

    @property
    def total(self) -> int:
        return sum(p.total for p in self.assignments)

    @property
    def active_seconds(self) -> float:
        return sum(p.active_seconds for p in self.assignments)


def sample_assessor_progress(sample: Sample) -> list[AssessorProgress]:
    """Each assessor's assignments on ``sample`` with judged, to judge and active time."""
    by_assessor: dict[int, list[Assignment]] = defaultdict(list)
    for assignment in Assignment.objects.filter(sample=sample).select_related(
        "topic", "topic__collection", "sample", "assessor"
    ):
        by_assessor[assignment.assessor_id].append(assignment)
    result = []
    for assignments in by_assessor.values():
        user = assignments[0].assessor
        progress = assignment_progress(assignments=assignments)
        progress.sort(key=lambda p: qid_sort_key(p.assignment.topic.qid))
        result.append(AssessorProgress(user.get_username(), user.pk, progress))
    return sorted(result, key=lambda row: row.username)
