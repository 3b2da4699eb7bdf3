"""Assignments of topics to assessors, and the judgments they make."""

from django.conf import settings
from django.db import models

from .collections import Document
from .samples import Sample
from .topics import Topic


class Assignment(models.Model):
    sample = models.ForeignKey(
        Sample, on_delete=models.CASCADE, related_name="assignments"
    )
    topic = models.ForeignKey(
        Topic, on_delete=models.CASCADE, related_name="assignments"
    )
    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["sample_id", "topic__qid", "assessor_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["sample", "topic", "assessor"], name="unique_assignment"
            )
        ]

    def __str__(self) -> str:
        return f"{self.topic} -> {self.assessor}"


class Judgment(models.Model):
    # PROTECT: human work is never deleted as a side effect of deleting what it refers to.
    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="judgments")
    document = models.ForeignKey(
        Document, on_delete=models.PROTECT, related_name="judgments"
    )
    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="judgments"
    )
    relevance = models.SmallIntegerField(
        null=True, blank=True, help_text="Empty = skipped."
    )
    # Idle-aware time on task, accumulated by the judging page.
    active_seconds = models.FloatField(default=0.0)
    # How many times the relevance was set (0: only time recorded so far); a save
    # based on an older version is a conflict, never a silent overwrite.
    version = models.PositiveIntegerField(default=0)
    # The collection's guidelines version in force when the grade was last set.
    guidelines_version = models.PositiveIntegerField(null=True, blank=True)
    # The judgment's role. Made on a known answer interleaved in the queue, it checks
    # the assessor and is never one of the human labels (the grade is known already).
    # A check and a label of the same document are two rows (the uniqueness key holds
    # the role): judging a drawn document never rewrites a check, and the reverse.
    quality_check = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["topic_id", "document_id", "assessor_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["topic", "document", "assessor", "quality_check"],
                name="one_judgment_per_assessor_and_role",
            )
        ]
        indexes = [
            models.Index(fields=["assessor", "topic"], name="judgment_assessor_idx")
        ]

    def __str__(self) -> str:
        return f"{self.topic.qid} {self.document.docno} {self.relevance}"
