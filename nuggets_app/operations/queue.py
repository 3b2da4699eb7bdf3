"""Sending Celery tasks by name: the one way services enqueue background work.

Tasks sit on top and call services, so services never import a tasks module; they
name the task here instead. The task is looked up in the project's Celery app and sent
exactly as its ``delay`` would: in-process when ``CELERY_TASK_ALWAYS_EAGER`` (no
``REDIS_URL``), else as a message to the broker, whose errors reach the caller. Call
it from ``transaction.on_commit`` so a worker never sees uncommitted rows.

The names are the tasks' registered names, kept from when every task lived in
``nuggets_app.tasks`` (messages already queued, and the beat schedule, use them).

Heavy work (the model's) goes through :func:`task_enqueue_background`: a message with a
broker, as above, and without one the process's background thread
(``operations.background``), so that it never runs inside a person's request.
"""

from __future__ import annotations

from typing import Any

MATCH_CHUNK = "nuggets_app.tasks.match_chunk"
MATCH_SUPERVISE = "nuggets_app.tasks.match_supervise"
MATCH_JOB_FIT = "nuggets_app.tasks.match_job_fit"
STAFF_TASK = "nuggets_app.tasks.staff_task"
UPLOADS_EXPIRE = "nuggets_app.tasks.uploads_expire"
COMPUTED_RUN = "nuggets_app.tasks.computed_run"
EMBED_CHUNK = "nuggets_app.tasks.embed_chunk"
EMBED_NUGGETS = "nuggets_app.tasks.embed_nuggets"
EMBED_DOCUMENTS = "nuggets_app.tasks.embed_documents"
UNPOOLED_SCORE = "nuggets_app.tasks.unpooled_score"
ROUNDS_ADVANCE = "nuggets_app.tasks.rounds_advance"


def task_enqueue(task_name: str, /, *args: Any, **kwargs: Any) -> None:
    """Send the task registered as ``task_name`` with these arguments (its ``delay``)."""
    _task(task_name).delay(*args, **kwargs)


def task_enqueue_background(task_name: str, ids: list[int], /) -> None:
    """Send the task (one argument: a list of ids) like :func:`task_enqueue`, except
    without a broker: then it runs after the caller returns, on this process's
    background thread, merged with other such calls still waiting, never inside it."""
    from nuggets_app.celery import app
    from nuggets_app.operations.background import background_submit

    task = _task(task_name)
    if app.conf.task_always_eager:
        background_submit(task_name, task, ids)
    else:
        task.delay(ids)


def _task(task_name: str) -> Any:
    from nuggets_app.celery import app

    if task_name not in app.tasks:
        # Nothing in this process imported the tasks modules yet (a web or command
        # process; a worker has them from its start): import them as the worker's
        # autodiscovery does, and nothing more (no Django setup or checks again).
        app.autodiscover_tasks(force=True)
    return app.tasks[task_name]
