"""Samples drawn from a pool for judging, with inclusion probabilities and queue order."""

from django.db import models

from .collections import Document
from .pools import Pool
from .topics import Topic


class Sample(models.Model):
    class Method(models.TextChoices):
        STATAP = "statap", "statAP (AP-prior, with replacement)"
        UNIFORM = "uniform", "Uniform (without replacement)"
        DEPTH = "depth", "Depth (best-ranked first)"
        VERIFICATION = "verification", "Verification (stratified by inferred label)"
        TOP_UP = "top_up", "Top-up of a new run's documents outside the pool"

    # Methods whose documents do not stand for the pool: no estimate or fit uses them
    # as the pool's sample.
    NOT_STATAP = (Method.VERIFICATION, Method.TOP_UP)

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="samples")
    name = models.CharField(max_length=200)
    method = models.CharField(max_length=16, choices=Method.choices)
    size = models.PositiveIntegerField(help_text="Distinct documents per topic.")
    seed = models.BigIntegerField()
    per_run_quota = models.BooleanField(default=False)
    # Per topic: {"qid": {"draws": K, "pool_size": n}} so inclusion probabilities can be
    # recomputed when the sample is extended.
    draws = models.JSONField(default=dict, blank=True)
    # Samples in rounds (nuggets_app.ir.rounds): the planned number of rounds and how
    # many have been drawn; 1 and 1 for a one-shot sample.
    rounds = models.PositiveSmallIntegerField(default=1)
    rounds_drawn = models.PositiveSmallIntegerField(default=1)
    # Whether assessors of this sample see each other's nuggets on the judging page
    # (with NUGGETS_SHARED on); off where several judge one topic, for agreement.
    nuggets_shared = models.BooleanField(
        default=True,
        help_text="Assessors see the nuggets others found for the same topic.",
    )
    # A top-up sample: the new run whose documents outside the pool it draws (its
    # documents are not in the pool; nuggets_app.ir.outside_pool).
    new_run = models.ForeignKey(
        "nuggets_app.JobNewRun",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="top_ups",
    )
    # A statAP sample steered by an automatic judge (nuggets_app.ir.judge_sampling):
    # the judge whose labels shaped the sampling distribution and its weight in it.
    judge = models.ForeignKey(
        "nuggets_app.Judge",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="samples",
    )
    judge_weight = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pool_id", "name"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "name"], name="unique_sample_name")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.method}, {self.size}/topic)"

    @property
    def size_text(self) -> str:
        """``N per topic``, or what the sample holds when ``N`` reaches past the pool
        of every topic (then it holds the whole pool)."""
        pools = [draw.get("pool_size") for draw in self.draws.values()]
        if pools and None not in pools and self.size >= max(pools):
            return (
                f"the whole pool (at most {max(pools)} per topic; "
                f"{self.size} per topic asked)"
            )
        return f"{self.size} per topic"


class DrawnDocuments(models.Manager):
    """The documents the sampler drew: known answers interleaved in the queue are
    left out, so every estimate, export and design reads the drawn sample only."""

    def get_queryset(self) -> models.QuerySet:
        return super().get_queryset().filter(known=False)


class SampleDocument(models.Model):
    sample = models.ForeignKey(
        Sample, on_delete=models.CASCADE, related_name="documents"
    )
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    # The effective inclusion probability 1/w (the estimators' π; see ir/rounds.py).
    inclusion_prob = models.FloatField()
    # The round that drew the document, its conditional inclusion probability in that
    # round and its variance factor (None for one-shot samples: (1 - π)/π² applies).
    round = models.PositiveSmallIntegerField(default=1)
    round_prob = models.FloatField(null=True, blank=True)
    var_weight = models.FloatField(null=True, blank=True)
    # Position in the assessor's queue for this topic (1-based, order of first draw).
    order = models.PositiveIntegerField()
    # A known answer interleaved in the assessors' queue to check them (never drawn:
    # inclusion_prob 1 is a placeholder no estimator reads; see ``objects``).
    known = models.BooleanField(default=False)

    # ``objects``: the drawn documents; ``queue``: the whole queue the assessors see.
    queue = models.Manager()
    objects = DrawnDocuments()

    class Meta:
        default_manager_name = "objects"
        base_manager_name = "queue"
        ordering = ["sample_id", "topic_id", "order"]
        constraints = [
            models.UniqueConstraint(
                fields=["sample", "topic", "document"], name="unique_sample_doc"
            ),
            models.UniqueConstraint(
                fields=["sample", "topic", "order"], name="unique_sample_order"
            ),
            models.CheckConstraint(
                condition=models.Q(inclusion_prob__gt=0)
                & models.Q(inclusion_prob__lte=1),
                name="inclusion_prob_in_0_1",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.sample_id}/{self.topic_id}/#{self.order}"
