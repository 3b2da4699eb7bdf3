"""Sentence embeddings kept once per unit and model: a document's windows, a nugget.

A unit is a window of a document's canonical text (``[start, end)``, whole sentences,
``nuggets_app.learning.semantic.text_windows``); its vector is the model's embedding
as little-endian float32 bytes (384 of them for all-MiniLM-L6-v2: 1,536 bytes). A
document whose text has no window keeps one row with ``start = end = 0`` and an empty
vector, so that it counts as embedded. A nugget's row records the hash of the text it
embedded: an edited nugget is embedded again.
"""

from django.db import models

from .collections import Collection, Document
from .nuggets import Nugget


class UnitEmbedding(models.Model):
    document = models.ForeignKey(
        Document, on_delete=models.CASCADE, related_name="embeddings"
    )
    model = models.CharField(max_length=100)
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    vector = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["document", "model", "start", "end"],
                name="unique_unit_embedding",
            )
        ]

    def __str__(self) -> str:
        return f"{self.document_id}[{self.start}:{self.end}] ({self.model})"


class NuggetEmbedding(models.Model):
    nugget = models.ForeignKey(
        Nugget, on_delete=models.CASCADE, related_name="embeddings"
    )
    model = models.CharField(max_length=100)
    text_sha1 = models.CharField(max_length=40)
    vector = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["nugget", "model"], name="unique_nugget_embedding"
            )
        ]

    def __str__(self) -> str:
        return f"nugget {self.nugget_id} ({self.model})"


class EmbeddingJob(models.Model):
    """Embedding a collection's documents, in chunks on the workers; resumable."""

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        DONE = "done", "done"
        CANCELLED = "cancelled", "cancelled"

    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="embedding_jobs"
    )
    model = models.CharField(max_length=100)
    max_words = models.PositiveIntegerField()
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.RUNNING
    )
    # Documents to embed when the job (or its last resume) started, and those done.
    docs_total = models.PositiveIntegerField(default=0)
    docs_done = models.PositiveIntegerField(default=0)
    units_done = models.PositiveIntegerField(default=0)
    seconds = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"embedding job #{self.pk} of {self.collection_id} ({self.status})"
