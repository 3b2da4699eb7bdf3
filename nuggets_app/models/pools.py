"""Depth-k pools: the union of the top k documents of chosen runs, per topic."""

from django.db import models

from .collections import Collection, Document
from .runs import Run
from .topics import Topic


class Pool(models.Model):
    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="pools"
    )
    name = models.CharField(max_length=200)
    depth = models.PositiveIntegerField()
    runs = models.ManyToManyField(Run, related_name="pools")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["collection_id", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "name"], name="unique_pool_name"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} (depth {self.depth})"


class PoolDocument(models.Model):
    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="documents")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    best_rank = models.PositiveIntegerField()
    num_runs = models.PositiveIntegerField()
    # statAP sampling probability p(d) (AP-prior weights averaged over runs).
    prior = models.FloatField(default=0.0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["pool", "topic", "document"], name="unique_pool_doc"
            )
        ]
        indexes = [models.Index(fields=["pool", "topic"], name="pooldoc_topic_idx")]

    def __str__(self) -> str:
        return f"{self.pool_id}/{self.topic_id}/{self.document_id}"
