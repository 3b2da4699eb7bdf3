"""Retrieval runs imported from TREC run files, and their ranked entries."""

from django.db import models

from .collections import Collection, Document
from .topics import Topic


class Run(models.Model):
    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="runs"
    )
    name = models.CharField(max_length=200, help_text="The run tag (sixth column).")
    source_file = models.CharField(max_length=500, blank=True)
    # The model the run used (e.g. an LLM reranker), set at import: a run built with
    # an automatic judge's model leans on that judge's figures (circularity).
    model = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Bumped by every (re-)import: the version the dashboard's kept results are keyed by.
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["collection_id", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "name"], name="unique_run_name"
            )
        ]

    def __str__(self) -> str:
        return self.name


class RunEntry(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="entries")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    # Rank after trec_eval's ordering (score descending, docno descending), 1-based.
    rank = models.PositiveIntegerField()
    score = models.FloatField()

    class Meta:
        verbose_name_plural = "run entries"
        constraints = [
            models.UniqueConstraint(
                fields=["run", "topic", "document"], name="unique_run_entry"
            )
        ]
        indexes = [
            models.Index(fields=["run", "topic", "rank"], name="runentry_rank_idx")
        ]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.topic_id}/{self.rank}"
