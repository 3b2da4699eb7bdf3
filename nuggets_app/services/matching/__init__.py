"""Matching jobs: launch, run one chunk, cancel, resume, supervise, re-score.

The database is the source of truth: a job's chunks, their attempts, progress and
results are rows. Celery only carries chunk ids.

Which mechanism brings back a killed worker's chunk:

- a SIGKILLed pool *child*: the settings have ``acks_late`` and
  ``reject_on_worker_lost``, so the broker hands the message out again at once; the
  chunk is still ``running`` in the database, but nobody holds its advisory lock any
  more (PostgreSQL releases it with the dead connection), so the redelivered task
  claims it again;
- a SIGKILLed *main* worker process (or lost broker data): the message only comes back
  after the broker's visibility timeout, so :func:`match_supervise` (run it from cron
  or ``manage.py match --supervise``) re-queues chunks whose heartbeat is older than
  ``settings.MATCH_CHUNK_STALE_SECONDS``, and :func:`match_job_resume` does the same
  for one job on demand.

Every claim counts an attempt in the database; past ``settings.MATCH_MAX_ATTEMPTS``
the chunk fails the job instead of running again, so a chunk that kills its worker
every time cannot loop forever.
"""

from .base import (
    ACTIVE,
    TRANSIENT_ERRORS,
    ChunkCancelled,
    MatchJobError,
    TransientChunkError,
    job_nugget_specs,
    job_nuggets,
)
from .chunks import ChunkOutcome, chunk_attempts, match_chunk_run
from .control import (
    match_job_cancel,
    match_job_progress,
    match_job_resume,
    match_supervise,
)
from .launch import match_job_launch
from .rescore import RescoreSummary, match_job_rescore, result_spans

__all__ = [
    "ACTIVE",
    "TRANSIENT_ERRORS",
    "ChunkCancelled",
    "ChunkOutcome",
    "MatchJobError",
    "RescoreSummary",
    "TransientChunkError",
    "chunk_attempts",
    "job_nugget_specs",
    "job_nuggets",
    "match_chunk_run",
    "match_job_cancel",
    "match_job_launch",
    "match_job_progress",
    "match_job_rescore",
    "match_job_resume",
    "match_supervise",
    "result_spans",
]
