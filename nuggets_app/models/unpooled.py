"""Documents scored for a finished job after the fact: a new run's unpooled documents."""

from django.db import models

from .collections import Document
from .fields import user_who_made_it
from .matching import MatchJob
from .topics import Topic


class UnpooledScore(models.Model):
    """One (job, topic, document) outside the job's documents, scored as the job's
    chunks score theirs: the matcher's best min-span score and nugget, and the raw
    features of the relevance model (packed float64, ``JobInference.feature_names``
    order) computed with the job's stored corpus statistics. Kept, so a second
    evaluation of a run reads them instead of matching again."""

    job = models.ForeignKey(
        MatchJob, on_delete=models.CASCADE, related_name="unpooled_scores"
    )
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    score = models.FloatField()
    nugget_id = models.BigIntegerField(null=True, blank=True)
    features = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["job", "topic", "document"], name="unique_unpooled_score"
            )
        ]

    def __str__(self) -> str:
        return f"job {self.job_id} topic {self.topic_id} document {self.document_id}"


class JobNewRun(models.Model):
    """A run evaluated against a finished job as a new run (it never built the pool),
    kept so the job page lists it and the runs page and the new-run page give it the
    same figures; ``scores`` is the run as uploaded (``{qid: {docno: score}}``, also
    its documents outside the collection)."""

    job = models.ForeignKey(MatchJob, on_delete=models.CASCADE, related_name="new_runs")
    name = models.CharField(max_length=200)
    scores = models.JSONField()
    sample = models.ForeignKey(
        "nuggets_app.Sample", null=True, blank=True, on_delete=models.SET_NULL
    )
    created_by = user_who_made_it(related_name=None)
    created_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["job_id", "name"]
        constraints = [
            models.UniqueConstraint(fields=["job", "name"], name="unique_job_new_run")
        ]

    def __str__(self) -> str:
        return f"{self.name} (new run of job {self.job_id})"
