"""Celery entry point of kept computations (a dashboard page's numbers)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from nuggets_app.operations import queue
from nuggets_app.operations.services import computed


@shared_task(name=queue.COMPUTED_RUN, ignore_result=True, acks_late=True)
def computed_run(name: str, params: dict[str, Any], key: str) -> dict[str, Any]:
    """Compute a kept result (``computed.computed_run``): a dashboard page's numbers."""
    return computed.computed_run(name=name, params=params, key=key)
