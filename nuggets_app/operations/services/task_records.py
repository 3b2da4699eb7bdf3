"""Generic records of long tasks started from the browser, with live progress and cancel.

A task's row says what it is and how it ended; while it runs, its progress
(``done``/``total``) lives in the cache, because the work itself runs inside one
database transaction that nobody else can see into until it commits. Cancelling sets a
flag the running task reads between batches; it then raises :class:`TaskCancelled`, its
transaction rolls back, and nothing of it is saved.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from nuggets_app.models import TaskRecord

_CHECK_EVERY_SECONDS = 0.5
_PROGRESS_TTL = 7 * 24 * 3600


class TaskCancelled(Exception):
    """Raised inside a task whose cancellation was asked for."""


def _progress_key(pk: int) -> str:
    return f"task-record:{pk}:progress"


def task_record_create(
    *,
    kind: str,
    user: Any,
    label: str,
    collection: Any = None,
    params: dict | None = None,
    status: str = TaskRecord.Status.QUEUED,
) -> TaskRecord:
    """A new task record (not started)."""
    return TaskRecord.objects.create(
        kind=kind,
        status=status,
        label=label[:300],
        collection=collection,
        started_by=user if getattr(user, "is_authenticated", False) else None,
        params=params or {},
    )


def task_status_text(*, task: TaskRecord) -> str:
    """The status as people read it; a checked upload says until when it waits."""
    if task.status == TaskRecord.Status.CHECKED and task.finished_at is not None:
        expires = timezone.localtime(task.finished_at + confirm_window())
        return f"awaits confirmation (until {expires:%Y-%m-%d %H:%M})"
    return task.get_status_display()


def tasks_listed(tasks: Iterable[TaskRecord]) -> list[TaskRecord]:
    """The tasks of a list page, each with its ``status_text`` (a checked upload's
    says until when it waits, as its own page does)."""
    listed = list(tasks)
    for task in listed:
        task.status_text = task_status_text(task=task)  # type: ignore[attr-defined]
    return listed


def confirm_window() -> timedelta:
    """How long a checked upload waits for its confirmation before it expires."""
    return timedelta(hours=settings.UPLOAD_CONFIRM_HOURS)


def task_record_progress(*, task: TaskRecord) -> dict[str, Any]:
    """``{"status", "done", "total", "phase", "error", "seconds"}`` for the progress bar."""
    live = cache.get(_progress_key(task.pk)) or {}
    done = live.get("done", 0)
    total = live.get("total", 0)
    if task.status == TaskRecord.Status.DONE:
        done = total = max(total, done, 1)
    return {
        "status": task.status,
        "status_text": task_status_text(task=task),
        "phase": live.get("phase", ""),
        "done": done,
        "total": total,
        "error": task.error,
        "seconds": task.duration,
        "final": task.is_final,
        "checked": task.status == TaskRecord.Status.CHECKED,
    }


class ProgressReporter:
    """Stores progress in the cache and raises :class:`TaskCancelled` when asked to.

    Call ``add(n)`` (records written) or ``set(done, total)``; both check the cancel
    flag in the database at most every half second.
    """

    def __init__(self, task: TaskRecord, phase: str, total: int = 0) -> None:
        self.pk = task.pk
        self.phase = phase
        self.done = 0
        self.total = total
        self._checked = 0.0
        self._store(force=True)

    def _store(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._checked < _CHECK_EVERY_SECONDS:
            return
        self._checked = now
        cache.set(
            _progress_key(self.pk),
            {"phase": self.phase, "done": self.done, "total": self.total},
            _PROGRESS_TTL,
        )
        # Read committed: the flag set by the cancel request is visible here even
        # inside the task's own transaction.
        if TaskRecord.objects.filter(pk=self.pk, cancel_requested=True).exists():
            raise TaskCancelled()

    def add(self, count: int) -> None:
        self.done += count
        self._store()

    def set(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        self._store()


def task_record_cancel(*, task: TaskRecord) -> TaskRecord:
    """Ask a task to stop; a task not yet running (or waiting for confirmation) ends
    at once as cancelled."""
    with transaction.atomic():
        task = TaskRecord.objects.select_for_update().get(pk=task.pk)
        if task.is_final:
            return task
        task.cancel_requested = True
        fields = ["cancel_requested"]
        if task.status in (TaskRecord.Status.CHECKED, TaskRecord.Status.QUEUED):
            task.status = TaskRecord.Status.CANCELLED
            task.finished_at = timezone.now()
            fields += ["status", "finished_at"]
        task.save(update_fields=fields)
    return task


def task_record_execute(
    *,
    task: TaskRecord,
    action: Callable[[TaskRecord], dict],
    running: str = TaskRecord.Status.RUNNING,
    success: str = TaskRecord.Status.DONE,
    describe_error: Callable[[Exception], str] = str,
    expected_errors: tuple[type[Exception], ...] = (ValueError,),
) -> TaskRecord:
    """Run ``action(task)``, recording start, end, result and how it ended.

    ``action`` returns the result dict; :class:`TaskCancelled` ends the task as
    cancelled, an ``expected_errors`` exception as failed with its message, anything
    else as failed with the exception's type and message (and is re-raised).
    """
    claimed = TaskRecord.objects.filter(pk=task.pk, cancel_requested=False).exclude(
        status__in=TaskRecord.FINAL
    )
    if not claimed.update(status=running, started_at=timezone.now(), finished_at=None):
        task.refresh_from_db()
        if not task.is_final:
            _finish(task, TaskRecord.Status.CANCELLED)
        return task
    task.refresh_from_db()
    try:
        result = action(task)
    except TaskCancelled:
        return _finish(task, TaskRecord.Status.CANCELLED)
    except expected_errors as exc:
        return _finish(task, TaskRecord.Status.FAILED, error=describe_error(exc))
    except Exception as exc:
        _finish(task, TaskRecord.Status.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    return _finish(task, success, result=result)


def _finish(
    task: TaskRecord, status: str, *, error: str = "", result: dict | None = None
) -> TaskRecord:
    task.status = status
    task.error = error
    if result is not None:
        task.result = result
    fields = ["status", "error", "result"]
    # A checked upload waits for people, not for work: its clock stops too.
    if status in TaskRecord.FINAL or status == TaskRecord.Status.CHECKED:
        task.finished_at = timezone.now()
        fields.append("finished_at")
    task.save(update_fields=fields)
    return task
