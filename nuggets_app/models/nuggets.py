"""Nuggets: minimal relevant pieces of text highlighted in a document."""

import uuid

from django.conf import settings
from django.db import models

from .collections import Document
from .topics import Topic


class Nugget(models.Model):
    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="nuggets")
    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="nuggets"
    )
    document = models.ForeignKey(
        Document, on_delete=models.PROTECT, related_name="nuggets"
    )
    # Character offsets [start, end) into document.text (canonical plain text).
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    # The highlighted text exactly as selected, kept so exports carry it beside offsets.
    span_text = models.TextField()
    # The nugget as the assessor rewrote it (co-reference fixed, shortened); matched text.
    text = models.TextField()
    # Words a document must contain for the nugget to count for it.
    keywords = models.JSONField(default=list, blank=True)
    grade = models.SmallIntegerField(null=True, blank=True)
    aspect = models.CharField(max_length=200, blank=True)
    # Idempotent creation from the browser: a retried POST finds the same row.
    client_uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["topic_id", "document_id", "start"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(end__gt=models.F("start")),
                name="nugget_span_not_empty",
            ),
        ]
        indexes = [models.Index(fields=["topic", "assessor"], name="nugget_topic_idx")]

    def __str__(self) -> str:
        return self.text[:80]
