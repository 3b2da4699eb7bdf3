"""Relevance judgments imported from files (TREC qrels, prels)."""

from django.db import models

from .collections import Collection, Document
from .topics import Topic


class Qrels(models.Model):
    class Kind(models.TextChoices):
        QRELS = "qrels", "TREC qrels"
        PRELS = "prels", "prels (with inclusion probabilities)"
        PROBABILISTIC = "prob", "probabilistic (a probability per pooled document)"
        SUBTOPICS = "subtopics", "subtopic (diversity) qrels"

    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="qrels"
    )
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.QRELS)
    source_file = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Bumped by every (re-)import: the version the dashboard's kept results are keyed by.
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "qrels"
        ordering = ["collection_id", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "name"], name="unique_qrels_name"
            )
        ]

    def __str__(self) -> str:
        return self.name


class QrelsEntry(models.Model):
    qrels = models.ForeignKey(Qrels, on_delete=models.CASCADE, related_name="entries")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    relevance = models.SmallIntegerField()
    # prels only: selection method code and inclusion probability.
    method = models.SmallIntegerField(null=True, blank=True)
    inclusion_prob = models.FloatField(null=True, blank=True)
    # probabilistic qrels only: probability of relevance (relevance -1: unjudged).
    probability = models.FloatField(null=True, blank=True)
    # subtopic qrels only: the subtopic (aspect) the document covers; blank otherwise,
    # so that plain qrels keep one entry per (topic, document).
    subtopic = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        verbose_name_plural = "qrels entries"
        constraints = [
            models.UniqueConstraint(
                fields=["qrels", "topic", "document", "subtopic"],
                name="unique_qrels_entry",
            )
        ]

    def __str__(self) -> str:
        return f"{self.topic_id} {self.document_id} {self.relevance}"
