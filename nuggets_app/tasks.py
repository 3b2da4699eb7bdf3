"""The top floor: every Celery task of the project, for Celery's autodiscovery.

Each domain keeps its entry points in its own ``tasks`` module; importing them here
registers them with the app (under the names in :mod:`nuggets_app.operations.queue`)
in every worker. Nothing below imports this module or a domain's ``tasks``. The
modules of the kept computations that ``computed_run`` runs are imported here too, so
they are registered in every worker.
"""

from nuggets_app.evaluation.services import dashboards
from nuggets_app.inference.tasks import (
    embed_chunk,
    embed_documents,
    embed_nuggets,
    match_chunk,
    match_job_fit,
    match_supervise,
    rounds_advance,
    unpooled_score,
)
from nuggets_app.operations.tasks import computed_run
from nuggets_app.staff.tasks import staff_task, uploads_expire

__all__ = [
    "computed_run",
    "dashboards",
    "embed_chunk",
    "embed_documents",
    "embed_nuggets",
    "match_chunk",
    "match_job_fit",
    "match_supervise",
    "rounds_advance",
    "staff_task",
    "unpooled_score",
    "uploads_expire",
]
