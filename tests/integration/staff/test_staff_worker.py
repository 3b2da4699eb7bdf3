"""Uploads through a real Celery worker: the page queues the check, the worker writes
the summary, the admin confirms, the worker imports."""

from __future__ import annotations

import pytest
from django.urls import reverse

from nuggets_app.importers import parse_topics
from nuggets_app.models import Collection, TaskRecord, Topic
from tests.conftest import TEST_DATA
from tests.helpers import status_until

pytestmark = pytest.mark.django_db(transaction=True)
CRANFIELD = TEST_DATA / "public" / "cranfield"


def wait_status(task: TaskRecord, wanted: set[str], timeout: float = 60.0) -> str:
    return status_until(task, wanted, timeout).status


def test_the_worker_checks_then_imports_after_confirmation(celery_worker, staff_client):
    Collection.objects.create(name="cranfield")
    with open(CRANFIELD / "topics.trec", "rb") as handle:
        response = staff_client.post(
            reverse("staff-upload", args=["cranfield", "topics"]),
            {"file": handle, "fmt": "auto"},
        )
    task = TaskRecord.objects.get()
    assert response["Location"] == reverse("staff-task", args=[task.pk])
    assert wait_status(task, {"checked", "refused", "failed"}) == "checked"
    expected = sum(1 for _ in parse_topics(CRANFIELD / "topics.trec"))
    assert task.summary["topics"] == expected
    assert Topic.objects.count() == 0

    staff_client.post(reverse("staff-task-confirm", args=[task.pk]))
    assert wait_status(task, {"done", "failed", "cancelled"}) == "done", task.error
    assert Topic.objects.count() == expected
    assert task.started_at is not None
    assert task.finished_at is not None
