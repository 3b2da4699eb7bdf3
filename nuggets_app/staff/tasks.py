"""Celery entry point of the long tasks staff start from the browser."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from nuggets_app.operations import queue


@shared_task(name=queue.STAFF_TASK, ignore_result=True, acks_late=True)
def staff_task(task_id: int, phase: str) -> dict[str, Any]:
    """One phase of a task started on the staff pages (``staff.services.staff_task_run``)."""
    from nuggets_app.staff import services as staff_tasks

    return {"status": staff_tasks.staff_task_run(task_id=task_id, phase=phase)}


@shared_task(name=queue.UPLOADS_EXPIRE, ignore_result=True)
def uploads_expire() -> int:
    """Cancel checked uploads left unconfirmed (``staff.services.uploads_expire``)."""
    from nuggets_app.staff import services as staff_tasks

    return staff_tasks.uploads_expire()
