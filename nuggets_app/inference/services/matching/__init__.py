"""Matching jobs: launch, run one chunk, cancel, resume, supervise, re-score.

The database is the source of truth: a job's chunks, their attempts, progress and
results are rows. Celery only carries chunk ids.

Which mechanism brings back a killed worker's chunk:

- a SIGKILLed pool *child*: the settings have ``acks_late`` and
  ``reject_on_worker_lost``, so the broker puts the message back in the queue at once
  (behind the messages already queued); the chunk is still ``running`` in the
  database, but nobody holds its advisory lock any more (PostgreSQL releases it with
  the dead connection), so the redelivered task claims it again;
- a SIGKILLed *main* worker process (or lost broker data): the message would only come
  back after the broker's visibility timeout, so :func:`match_supervise` (Celery beat
  runs it every ``MATCH_SUPERVISE_SECONDS``, and every worker once
  ``MATCH_ORPHAN_SECONDS`` after it starts) re-queues *orphans*, running chunks whose
  advisory lock nobody holds, within seconds; chunks whose heartbeat is older than
  ``settings.MATCH_CHUNK_STALE_SECONDS`` (a hung worker, lost messages) are re-queued
  too. :func:`match_job_resume` does the same for one job on demand;
- a dropped database connection: the chunk's task retries with backoff on a new
  connection, and the attempt is given back.

Every claim counts an attempt in the database; past ``settings.MATCH_MAX_ATTEMPTS``
the chunk fails the job instead of running again, so a chunk that kills its worker
every time cannot loop forever.
"""

from nuggets_app.inference.selectors import job_nugget_specs, job_nuggets

from .base import (
    ACTIVE,
    TRANSIENT_ERRORS,
    ChunkCancelled,
    MatchJobError,
    TransientChunkError,
    db_connection_lost,
    db_connection_reset,
)
from .chunks import (
    ChunkOutcome,
    chunk_attempts,
    match_chunk_run,
    match_job_finish_here,
)
from .control import (
    match_job_cancel,
    match_job_progress,
    match_job_resume,
    match_orphans_requeue,
    match_supervise,
)
from .launch import MatchParams, match_job_launch
from .rescore import RescoreSummary, match_job_rescore, result_spans

__all__ = [
    "ACTIVE",
    "TRANSIENT_ERRORS",
    "ChunkCancelled",
    "ChunkOutcome",
    "MatchJobError",
    "MatchParams",
    "RescoreSummary",
    "TransientChunkError",
    "chunk_attempts",
    "db_connection_lost",
    "db_connection_reset",
    "job_nugget_specs",
    "job_nuggets",
    "match_chunk_run",
    "match_job_cancel",
    "match_job_finish_here",
    "match_job_launch",
    "match_job_progress",
    "match_job_rescore",
    "match_job_resume",
    "match_orphans_requeue",
    "match_supervise",
    "result_spans",
]
