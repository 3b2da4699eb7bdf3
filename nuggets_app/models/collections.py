"""Document collections and their documents (canonical plain text + sanitized HTML)."""

from django.db import models

DEFAULT_GRADES = [
    {"value": 0, "label": "Non-relevant", "key": "0"},
    {"value": 1, "label": "Relevant", "key": "1"},
    {"value": 2, "label": "Highly relevant", "key": "2"},
]


def default_grades() -> list[dict]:
    return [dict(grade) for grade in DEFAULT_GRADES]


class Collection(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    # Relevance scale shown to assessors: [{"value": int, "label": str, "key": str}].
    grades = models.JSONField(default=default_grades)
    # The relevance level as set: "relevant at grade >= k" for binary decisions
    # (inference, estimates, exports); None: the smallest positive grade of
    # ``grades``. TREC DL uses 2. Read the level in force as ``relevance_level``.
    relevance_level_setting = models.PositiveSmallIntegerField(
        "relevance level", null=True, blank=True
    )
    # How several assessors' grades become one human label (nuggets_app.judging.
    # aggregation): {"rule", "primary", "ties", "fallback"}; {} is "highest".
    aggregation = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def relevance_level(self) -> int:
        """The relevance level in force: the smallest grade counted as relevant for
        binary decisions (the setting, else the smallest positive grade)."""
        if self.relevance_level_setting is not None:
            return self.relevance_level_setting
        positive = [g["value"] for g in self.grades if g["value"] > 0]
        return min(positive) if positive else 1


class Document(models.Model):
    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="documents"
    )
    docno = models.CharField(max_length=200)
    title = models.TextField(blank=True)
    # Canonical plain text: what assessors read and highlight, and what matching reads.
    # Nugget offsets index into it, so it is never re-normalised after import.
    text = models.TextField(blank=True)
    # Sanitized original HTML (nh3), shown on request; empty for plain-text documents.
    html = models.TextField(blank=True)
    length_words = models.PositiveIntegerField(default=0)
    length_chars = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["collection_id", "docno"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "docno"], name="unique_docno_per_collection"
            )
        ]

    def __str__(self) -> str:
        return self.docno
