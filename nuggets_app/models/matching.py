"""Matching jobs, their chunks (the unit of work of a Celery task) and results."""

from django.db import models

from .collections import Collection, Document
from .fields import user_who_made_it
from .nuggets import Nugget
from .pools import Pool
from .samples import Sample
from .topics import Topic


class MatchJob(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    # The statuses a job does not leave by itself (the pages stop polling).
    FINAL = (Status.DONE, Status.FAILED, Status.CANCELLED)

    class Source(models.TextChoices):
        POOL = "pool", "Pool"
        SAMPLE = "sample", "Sample"
        COLLECTION = "collection", "Whole collection"

    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="match_jobs"
    )
    name = models.CharField(max_length=200, blank=True)
    topics = models.ManyToManyField(Topic, related_name="match_jobs")
    source = models.CharField(
        max_length=16, choices=Source.choices, default=Source.POOL
    )
    pool = models.ForeignKey(Pool, null=True, blank=True, on_delete=models.SET_NULL)
    sample = models.ForeignKey(Sample, null=True, blank=True, on_delete=models.SET_NULL)
    # Which nuggets count: {"assessors": [user ids], "grades": [int], "aspects": [str]};
    # an absent or empty list means no restriction.
    nugget_filter = models.JSONField(default=dict, blank=True)
    # The relevance level as set: "relevant at grade >= k" for this job's model, rules
    # and estimates, fixed at launch from the collection's level (None: a job from
    # before; the collection's). Read the level in force as ``relevance_level``.
    relevance_level_setting = models.PositiveSmallIntegerField(
        "relevance level", null=True, blank=True
    )
    k = models.PositiveSmallIntegerField(default=3)
    lam = models.FloatField(default=0.5)
    # Each re-scoring, oldest first: {"lam", "previous_lam", "at" (ISO UTC), "changed"}.
    # Scoring 1 is the run itself; scoring n + 1 follows the n-th re-scoring.
    rescorings = models.JSONField(default=list, blank=True)
    # The largest document id of the collection when the job was launched: documents
    # above it were imported after the job (match --new-documents). None: a job from
    # before it was kept (its own largest document id stands in).
    documents_before = models.BigIntegerField(null=True, blank=True)
    stem = models.CharField(max_length=16, default="porter")
    stopwords = models.CharField(max_length=16, default="default")
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.PENDING
    )
    error = models.TextField(blank=True)
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    docs_total = models.PositiveIntegerField(default=0)
    docs_done = models.PositiveIntegerField(default=0)
    created_by = user_who_made_it(related_name=None)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name or f"job {self.pk}"

    @property
    def label(self) -> str:
        """How a select names the job: its number, its name, its collection and what
        it matched (select_related ``collection``, ``pool`` and ``sample``)."""
        if self.pool_id is not None and self.pool is not None:
            what = f"pool {self.pool.name}"
        elif self.sample_id is not None and self.sample is not None:
            what = f"sample {self.sample.name}"
        else:
            what = self.get_source_display().lower()
        name = f" {self.name}" if self.name else ""
        return f"Job {self.pk}{name} ({self.collection.name}, {what})"

    @property
    def relevance_level(self) -> int:
        """The relevance level in force: the smallest grade this job counts as
        relevant (its setting, else its collection's level)."""
        if self.relevance_level_setting is not None:
            return self.relevance_level_setting
        return self.collection.relevance_level

    def relevance_text(self) -> str:
        """ "relevant at grade >= 2": the job's binary relevance, in words."""
        return f"relevant at grade >= {self.relevance_level}"

    @property
    def scoring(self) -> int:
        """Which scoring the results hold now (1 until the first re-scoring)."""
        return 1 + len(self.rescorings or [])

    def scoring_text(self) -> str:
        """ "job 3 scoring 2 (lambda 0.3, re-scored 2026-11-23 01:59 UTC)": which scores an
        evaluation or export used."""
        if self.rescorings:
            when = f"re-scored {_when(self.rescorings[-1]['at'])}"
        elif self.finished_at:
            when = f"run {self.finished_at:%Y-%m-%d %H:%M} UTC"
        else:
            when = "not finished"
        return f"job {self.pk} scoring {self.scoring} (lambda {self.lam:g}, {when})"

    def scoring_history(self) -> list[str]:
        """Every scoring, oldest first, in words."""
        lams = [r["previous_lam"] for r in self.rescorings or []] + [self.lam]
        whens = [f"{self.finished_at:%Y-%m-%d %H:%M} UTC" if self.finished_at else "-"]
        whens += [_when(r["at"]) for r in self.rescorings or []]
        return [
            f"scoring {n}: lambda {lam:g}, {when}"
            for n, (lam, when) in enumerate(zip(lams, whens, strict=True), start=1)
        ]


def _when(iso: str) -> str:
    return iso[:16].replace("T", " ") + " UTC"


class MatchChunk(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    job = models.ForeignKey(MatchJob, on_delete=models.CASCADE, related_name="chunks")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    index = models.PositiveIntegerField()
    document_ids = models.JSONField(default=list)
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.QUEUED
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The chunk's evidence packed as numpy arrays (shingle S and k per matched nugget),
    # so a whole job is re-scored for a new lambda without parsing per-result JSON.
    packed_evidence = models.BinaryField(null=True, blank=True, editable=False)
    # The raw relevance-model features of the chunk's documents, packed (document ids
    # and a documents x features float64 matrix), so refits never read text again.
    packed_features = models.BinaryField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["job_id", "topic_id", "index"]
        constraints = [
            models.UniqueConstraint(
                fields=["job", "topic", "index"], name="unique_chunk"
            )
        ]
        indexes = [models.Index(fields=["job", "status"], name="chunk_status_idx")]

    def __str__(self) -> str:
        return f"{self.job_id}/{self.topic_id}/{self.index}"


class MatchResult(models.Model):
    job = models.ForeignKey(MatchJob, on_delete=models.CASCADE, related_name="results")
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    score = models.FloatField()
    nugget = models.ForeignKey(Nugget, null=True, blank=True, on_delete=models.SET_NULL)
    # Character spans [[start, end], ...] of the best nugget's matched shingles.
    spans = models.JSONField(default=list, blank=True)
    # The lambda-free evidence for re-scoring (S and k of every matched shingle) is kept
    # once per chunk, packed, in MatchChunk.packed_evidence.

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["job", "topic", "document"], name="unique_match_result"
            )
        ]
        indexes = [
            models.Index(fields=["job", "topic", "-score"], name="result_score_idx")
        ]

    def __str__(self) -> str:
        return f"{self.job_id} {self.topic_id} {self.document_id} {self.score:.4f}"


class JobInferenceManager(models.Manager):
    """Defers ``stats`` (the job's document frequencies, megabytes for a large
    collection): a page reading the model row does not read them; code that needs
    them reads them by name or on first access."""

    def get_queryset(self) -> models.QuerySet:
        return super().get_queryset().defer("stats")


class JobInference(models.Model):
    """A job's relevance model: the BM25 corpus statistics its chunks share, the
    fitted model, and its probability of relevance for every (topic, document)."""

    job = models.OneToOneField(
        MatchJob, on_delete=models.CASCADE, related_name="inference"
    )
    # Corpus statistics over the documents of the job (computed once, in parts the
    # workers share, then merged, so every chunk's features agree).
    stats = models.JSONField(null=True, blank=True)
    feature_names = models.JSONField(default=list, blank=True)
    # The fitted model (RelevanceModel.to_json) and what the fit saw.
    model = models.JSONField(null=True, blank=True)
    fit_info = models.JSONField(default=dict, blank=True)
    # The sample whose design (weights 1/pi, anchoring to its estimate of R) the fit
    # used; None: equal weights (no sample of the job's pool).
    fit_sample = models.ForeignKey(
        "nuggets_app.Sample",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # The probabilities are rows of JobTopicProbabilities, one per topic.
    fitted_at = models.DateTimeField(null=True, blank=True)
    fit_seconds = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)

    objects = JobInferenceManager()

    def __str__(self) -> str:
        return f"inference of job {self.job_id}"


class JobTopicProbabilities(models.Model):
    """One topic's probabilities of relevance under the job's fitted model: packed
    document ids and p (``job_model.features_pack``, one column). Human judgments are
    applied on read, so a new judgment overrides without a refit. A row per topic:
    a page or a rule reads its topic only, and no value nears PostgreSQL's 1 GB limit
    (16 bytes a document)."""

    job = models.ForeignKey(
        MatchJob, on_delete=models.CASCADE, related_name="topic_probabilities"
    )
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    probabilities = models.BinaryField(editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["job", "topic"], name="job_topic_probabilities_unique"
            )
        ]

    def __str__(self) -> str:
        return f"probabilities of job {self.job_id}, topic {self.topic_id}"


class JobStatsPart(models.Model):
    """One slice of a job's corpus-statistics pass, claimed by whichever worker is
    free: its documents and, once done, their sums (merged into ``JobInference.stats``,
    then deleted)."""

    job = models.ForeignKey(
        MatchJob, on_delete=models.CASCADE, related_name="stats_parts"
    )
    index = models.PositiveSmallIntegerField()
    # A contiguous slice of the job's sorted distinct document ids.
    document_ids = models.JSONField(default=list)
    documents = models.PositiveIntegerField(default=0)
    total_length = models.BigIntegerField(default=0)
    df = models.JSONField(default=dict)
    done = models.BooleanField(default=False)

    class Meta:
        ordering = ["job_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["job", "index"], name="unique_stats_part")
        ]

    def __str__(self) -> str:
        return f"statistics part {self.index} of job {self.job_id}"
