"""Automatic (LLM) judges of a collection and the labels they gave.

A judge's labels are evidence to audit against the people's sample, never the
people's judgments: no estimate reads them as human labels. A label names its
document by ``docno`` always; ``document`` is set when the collection holds that
docno, and empty for a document the collection does not (yet) hold, so that the
labels a judge gave beyond the pool stay for runs imported later.
"""

from django.db import models

from .collections import Collection, Document
from .topics import Topic


class Judge(models.Model):
    class Kind(models.TextChoices):
        GRADED = "graded", "graded (an integer grade per document)"
        SCORE = "score", "score (any number, higher is more relevant)"
        PROBABILITIES = "probabilities", "probabilities (of each grade, or of yes)"

    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="judges"
    )
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # What the judge is: free text kept with the labels and in releases.
    model = models.CharField(max_length=200, blank=True)
    prompt = models.TextField(blank=True)
    date = models.DateField(null=True, blank=True)
    notes = models.TextField(blank=True)
    # Scores only: a score >= threshold counts as the judge calling it relevant
    # (None: 0.5 when every score lies in [0, 1]).
    threshold = models.FloatField(null=True, blank=True)
    source_file = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Set when a result first read the labels (an audit, a release): from then on
    # they are kept as read, and a new file goes to a judge of another name.
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["collection_id", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "name"], name="unique_judge_name"
            )
        ]

    def __str__(self) -> str:
        return self.name


class JudgeLabel(models.Model):
    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="labels")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    docno = models.CharField(max_length=200)
    # Empty when the collection does not hold ``docno`` (labels beyond the pool).
    document = models.ForeignKey(
        Document, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # One of the three, by the judge's kind.
    grade = models.SmallIntegerField(null=True, blank=True)
    score = models.FloatField(null=True, blank=True)
    # {"0": p0, "1": p1, ...} (probability per grade) or {"yes": p}.
    probabilities = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["judge", "topic", "docno"], name="unique_judge_label"
            )
        ]

    def __str__(self) -> str:
        return f"{self.judge_id} {self.topic_id} {self.docno}"
