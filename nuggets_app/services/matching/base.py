"""Shared pieces of the matching services: states, errors, the job's nuggets."""

from __future__ import annotations

import logging

from django.db import DatabaseError

from matcher import NuggetSpec
from nuggets_app.models import (
    MatchChunk,
    MatchJob,
    Nugget,
)

logger = logging.getLogger("nuggets_app.services.matching")

Status = MatchJob.Status
ChunkStatus = MatchChunk.Status
ACTIVE = (Status.PENDING, Status.RUNNING)
RESULT_BATCH = 1000
HEARTBEAT_SECONDS = 1.0
# Namespace of the advisory locks (two-int form), so chunk ids never collide with
# locks other code takes on the same database.
LOCK_CLASS = 0x4E55


class MatchJobError(ValueError):
    """A job cannot be launched or changed as asked; the message says why."""


class TransientChunkError(Exception):
    """A chunk failed for a reason that may go away (database or broker hiccup)."""


class ChunkCancelled(Exception):
    """The job was cancelled while the chunk ran."""


TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    TransientChunkError,
    DatabaseError,
    ConnectionError,
    TimeoutError,
)


def job_nuggets(job: MatchJob, topic_id: int):
    """The nuggets of a topic that the job's nugget filter keeps, by primary key."""
    qs = Nugget.objects.filter(topic_id=topic_id)
    f = job.nugget_filter or {}
    if f.get("assessors"):
        qs = qs.filter(assessor_id__in=f["assessors"])
    if f.get("grades"):
        qs = qs.filter(grade__in=f["grades"])
    if f.get("aspects"):
        qs = qs.filter(aspect__in=f["aspects"])
    return qs.order_by("pk")


def job_nugget_specs(job: MatchJob, topic_id: int) -> list[NuggetSpec]:
    """The matcher's view of the job's nuggets for a topic (id = nugget primary key)."""
    return [
        NuggetSpec(
            id=str(n.pk), text=n.text, keywords=tuple(n.keywords or ()), grade=n.grade
        )
        for n in job_nuggets(job, topic_id)
    ]
