"""Resolving and checking several assessors' work: adjudicated decisions, assessment
guidelines (versioned) and known answers used to check assessors."""

from django.conf import settings
from django.db import models

from .collections import Collection, Document
from .fields import user_who_made_it
from .topics import Topic


class Adjudication(models.Model):
    """The adjudicator's grade for a (topic, document) the assessors disagree on: its
    own kind of judgment, beside theirs, never written over them (its changes are
    kept in the history as ``WorkChange`` of kind ``adjudication``)."""

    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="+")
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    relevance = models.SmallIntegerField()
    note = models.CharField(max_length=200, blank=True)
    # Times the decision was set, as for a judgment: a save based on an older one is
    # a conflict.
    version = models.PositiveIntegerField(default=1)
    guidelines_version = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["topic_id", "document_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["topic", "document"], name="one_adjudication_per_document"
            )
        ]

    def __str__(self) -> str:
        return f"{self.topic_id} {self.document_id} {self.relevance} (adjudicated)"


class Guidelines(models.Model):
    """One version of a collection's assessment guidelines (Markdown). A change is a
    new row with the next version; the latest is the one in force."""

    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="guidelines"
    )
    version = models.PositiveIntegerField()
    text = models.TextField()
    author = user_who_made_it()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "guidelines"
        ordering = ["collection_id", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "version"], name="unique_guidelines_version"
            )
        ]

    def __str__(self) -> str:
        return f"{self.collection_id} guidelines v{self.version}"


class KnownAnswer(models.Model):
    """A document whose grade for a topic is known (from imported qrels or an
    adjudicated decision), used to check assessors: interleaved in their queues, it
    is judged like any other document and compared with this grade."""

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    relevance = models.SmallIntegerField()
    # Where the grade comes from: "qrels:<name>" or "adjudicated".
    source = models.CharField(max_length=220)
    created_by = user_who_made_it()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["topic_id", "document_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["topic", "document"], name="one_known_answer_per_document"
            )
        ]

    def __str__(self) -> str:
        return f"{self.topic_id} {self.document_id} {self.relevance} (known)"
