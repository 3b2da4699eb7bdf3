"""Reads for the workload page: per assessor and sample, the documents assigned,
judged and remaining, time on task, the judging rate, and when the work should be
done at the pace kept so far.

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

from django.utils import timezone

from nuggets_app.models import Assignment, Judgment, Sample
from nuggets_app.pooling.selectors import assignment_progress

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
