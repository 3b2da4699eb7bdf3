"""Assignments of a sample's topics to assessors, round robin with overlap."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction

from nuggets_app.errors import DomainError
from nuggets_app.models import Assignment, Sample, SampleDocument, Topic
from nuggets_app.pooling.selectors import is_simulated
from nuggets_app.pooling.services.pools import qid_sort_key


class AssignmentError(DomainError):
    """Topics cannot be assigned as asked; the message says why."""


def _sampled_topics(sample: Sample, topics: Sequence[Topic] | None) -> list[Topic]:
    sampled_ids = set(
        SampleDocument.objects.filter(sample=sample).values_list("topic_id", flat=True)
    )
    if topics is None:
        chosen = list(Topic.objects.filter(pk__in=sampled_ids))
    else:
        missing = sorted(
            (topic.qid for topic in topics if topic.pk not in sampled_ids),
            key=qid_sort_key,
        )
        if missing:
            raise AssignmentError(
                f"topics without documents in sample {sample.name}: {', '.join(missing)}"
            )
        chosen = list(topics)
    if not chosen:
        raise AssignmentError(f"sample {sample.name} has no topics to assign")
    return sorted(chosen, key=lambda topic: qid_sort_key(topic.qid))


def assignment_plan(
    *, qids: Sequence[str], assessors: Sequence[str], overlap: int
) -> list[tuple[str, str]]:
    """Round robin: the i-th topic goes to assessors ``i*k .. i*k+k-1`` (mod their count).

    Every topic gets ``k = overlap`` different assessors and the load of any two
    assessors differs by at most one topic.
    """
    if not assessors:
        raise AssignmentError("no assessors given")
    if len(set(assessors)) != len(assessors):
        raise AssignmentError("an assessor is listed twice")
    if not 1 <= overlap <= len(assessors):
        raise AssignmentError(
            f"overlap must be between 1 and the number of assessors "
            f"({len(assessors)}), got {overlap}"
        )
    count = len(assessors)
    return [
        (qid, assessors[(index * overlap + offset) % count])
        for index, qid in enumerate(qids)
        for offset in range(overlap)
    ]


def assignment_create(
    *,
    sample: Sample,
    assessors: Sequence[Any],
    topics: Sequence[Topic] | None = None,
    overlap: int = 1,
) -> list[Assignment]:
    """Assign ``topics`` (default: every sampled topic) of ``sample`` to assessors.

    Round robin (``assignment_plan``); assignments that already exist are kept, so
    running it again changes nothing. Returns the assignments of the plan. Simulated
    assessors (``pooling.selectors.is_simulated``) are refused. With ``overlap`` above 1 the
    sample's assessors stop seeing each other's nuggets (``Sample.nuggets_shared``),
    so that their agreement is measured on independent work.
    """
    simulated = [user.get_username() for user in assessors if is_simulated(user)]
    if simulated:
        raise AssignmentError(
            f"simulated assessors cannot be assigned real work: {', '.join(simulated)}"
        )
    chosen = _sampled_topics(sample, topics)
    by_qid = {topic.qid: topic for topic in chosen}
    by_name = {user.get_username(): user for user in assessors}
    plan = assignment_plan(
        qids=list(by_qid),
        assessors=[user.get_username() for user in assessors],
        overlap=overlap,
    )
    with transaction.atomic():
        if overlap > 1 and sample.nuggets_shared:
            sample_nuggets_share(sample=sample, shared=False)
        Assignment.objects.bulk_create(
            [
                Assignment(sample=sample, topic=by_qid[qid], assessor=by_name[name])
                for qid, name in plan
            ],
            ignore_conflicts=True,
        )
        wanted = {(by_qid[qid].pk, by_name[name].pk) for qid, name in plan}
        current = Assignment.objects.filter(
            sample=sample, topic__in=chosen
        ).select_related("topic", "assessor")
        return [a for a in current if (a.topic_id, a.assessor_id) in wanted]


def sample_nuggets_share(*, sample: Sample, shared: bool) -> Sample:
    """Whether the assessors of ``sample`` see each other's nuggets while judging (only
    where ``NUGGETS_SHARED`` is on; staff always see all)."""
    Sample.objects.filter(pk=sample.pk).update(nuggets_shared=shared)
    sample.nuggets_shared = shared
    return sample


def assignment_reassign(
    *, assignments: Sequence[Assignment], assessor: Any
) -> list[Assignment]:
    """Give unfinished ``assignments`` to ``assessor`` instead of their current one.

    A finished assignment (every queued document judged by its assessor) is refused.
    The judgments and nuggets already made stay with the person who made them; the new
    assessor judges the whole queue. An assignment the new assessor already has for the
    same sample and topic is kept as it is. All in one transaction.
    """
    from nuggets_app.models import Judgment

    if is_simulated(assessor):
        raise AssignmentError(
            f"simulated assessors cannot be assigned real work: {assessor}"
        )
    moved: list[Assignment] = []
    with transaction.atomic():
        for assignment in assignments:
            queue = SampleDocument.objects.filter(
                sample_id=assignment.sample_id, topic_id=assignment.topic_id
            ).values("document_id")
            judged = Judgment.objects.filter(
                topic_id=assignment.topic_id,
                assessor_id=assignment.assessor_id,
                document_id__in=queue,
                relevance__isnull=False,
                quality_check=False,
            ).count()
            if judged >= queue.count():
                raise AssignmentError(
                    f"topic {assignment.topic.qid} of {assignment.assessor} is finished"
                )
            if assignment.assessor_id == assessor.pk:
                raise AssignmentError(
                    f"topic {assignment.topic.qid} is already {assessor}'s"
                )
            new, _ = Assignment.objects.get_or_create(
                sample_id=assignment.sample_id,
                topic_id=assignment.topic_id,
                assessor=assessor,
            )
            assignment.delete()
            moved.append(new)
    return moved
