"""Documents scored for a finished job after the fact: a new run's unpooled documents."""

from django.db import models

from .collections import Document
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
