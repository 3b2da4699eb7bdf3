"""Long tasks that staff start from the browser: imports, pools, samples.

One row per task: what it is, who started it, its state, the check summary and the
problems found, and how it ended. Live progress lives in the cache while it runs
(``nuggets_app.operations.services.task_records``); matching jobs keep their own model.
"""

from django.db import models

from .collections import Collection
from .fields import user_who_made_it


class TaskRecord(models.Model):
    class Kind(models.TextChoices):
        DOCUMENTS = "documents", "Import documents"
        TOPICS = "topics", "Import topics"
        RUNS = "runs", "Import runs"
        QRELS = "qrels", "Import qrels / prels"
        NUGGETS = "nuggets", "Import a nugget bank"
        POOL = "pool", "Build a pool"
        SAMPLE = "sample", "Draw a sample"
        EXTEND = "extend", "Extend a sample"

    class Status(models.TextChoices):
        CHECKING = "checking", "checking"
        CHECKED = "checked", "checked, waiting for confirmation"
        REFUSED = "refused", "refused by the check"
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    FINAL = (Status.REFUSED, Status.DONE, Status.FAILED, Status.CANCELLED)

    kind = models.CharField(max_length=16, choices=Kind.choices)
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.QUEUED
    )
    label = models.CharField(max_length=300, blank=True)
    collection = models.ForeignKey(
        Collection,
        on_delete=models.CASCADE,
        related_name="task_records",
        null=True,
        blank=True,
    )
    started_by = user_who_made_it(related_name="task_records")
    # What to do: form values, and for uploads [{"name": shown, "path": stored}].
    params = models.JSONField(default=dict, blank=True)
    files = models.JSONField(default=list, blank=True)
    # What the check pass found, and every problem as "FILE:LINE: problem".
    summary = models.JSONField(default=dict, blank=True)
    problems = models.JSONField(default=list, blank=True)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk} ({self.status})"

    @property
    def is_final(self) -> bool:
        return self.status in self.FINAL

    @property
    def duration(self) -> float | None:
        """Seconds from start to end (or to now while it runs); None before it starts."""
        if self.started_at is None:
            return None
        from django.utils import timezone

        end = self.finished_at or timezone.now()
        return (end - self.started_at).total_seconds()
