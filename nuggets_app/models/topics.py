"""Topics (information needs), per collection, with optional aspects/subtopics."""

from django.db import models

from .collections import Collection


class Topic(models.Model):
    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="topics"
    )
    qid = models.CharField(max_length=64)
    title = models.TextField(blank=True)
    description = models.TextField(blank=True)
    narrative = models.TextField(blank=True)
    # [{"id": str, "text": str}]: subtopics a nugget can be filed under.
    aspects = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["collection_id", "qid"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "qid"], name="unique_qid_per_collection"
            )
        ]

    def __str__(self) -> str:
        return f"{self.qid}: {self.title[:60]}"
