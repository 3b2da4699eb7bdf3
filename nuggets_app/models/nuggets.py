"""Nuggets: minimal relevant pieces of text highlighted in a document, or imported.

A nugget is owned either by the assessor who made it (``assessor``) or by the nugget
bank it was imported from (``bank``: the file, its format, who imported it), never by
neither. An imported nugget may lack a source document (TREC QA and RAG keys carry no
text); then ``document``, ``start`` and ``end`` are all empty.
"""

import uuid

from django.conf import settings
from django.db import models

from .collections import Collection, Document
from .fields import user_who_made_it
from .topics import Topic


class NuggetBank(models.Model):
    """Nuggets imported from one file: their provenance ("imported from FILE")."""

    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="nugget_banks"
    )
    name = models.CharField(max_length=200)
    # The reader that parsed the file (jsonl, trec-qa, rag, trec-ts).
    format = models.CharField(max_length=20)
    source_file = models.CharField(max_length=500)
    imported_by = user_who_made_it()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["collection_id", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "name"], name="unique_nugget_bank_name"
            )
        ]

    def __str__(self) -> str:
        return self.name

    def provenance(self) -> str:
        """What people see beside an imported nugget."""
        return self.provenance_of(self.source_file)

    @staticmethod
    def provenance_of(source_file: str) -> str:
        return f"imported from {source_file.rsplit('/', 1)[-1]}"


class Nugget(models.Model):
    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="nuggets")
    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="nuggets",
    )
    # Set for imported nuggets (then ``assessor`` is empty); re-importing a bank
    # replaces its nuggets.
    bank = models.ForeignKey(
        NuggetBank,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="nuggets",
    )
    # The nugget's id in the imported file (e.g. a TREC TS nugget id).
    source_id = models.CharField(max_length=100, blank=True)
    # An imported nugget's provenance as its file gives it (a nugget bank written by
    # export_nuggets): who made it and the grade they gave its document.
    source_assessor = models.CharField(max_length=150, blank=True)
    source_judgment = models.SmallIntegerField(null=True, blank=True)
    document = models.ForeignKey(
        Document,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="nuggets",
    )
    # Character offsets [start, end) into document.text (canonical plain text).
    start = models.PositiveIntegerField(null=True, blank=True)
    end = models.PositiveIntegerField(null=True, blank=True)
    # The highlighted text exactly as selected, kept so exports carry it beside offsets.
    span_text = models.TextField()
    # The nugget as the assessor rewrote it (co-reference fixed, shortened); matched text.
    text = models.TextField()
    # Words a document must contain for the nugget to count for it.
    keywords = models.JSONField(default=list, blank=True)
    grade = models.SmallIntegerField(null=True, blank=True)
    aspect = models.CharField(max_length=200, blank=True)
    # Idempotent creation from the browser: a retried POST finds the same row.
    client_uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["topic_id", "document_id", "start"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(end__gt=models.F("start")),
                name="nugget_span_not_empty",
            ),
            models.CheckConstraint(
                condition=models.Q(assessor__isnull=False, bank__isnull=True)
                | models.Q(assessor__isnull=True, bank__isnull=False),
                name="nugget_owned_by_assessor_or_bank",
            ),
            models.CheckConstraint(
                condition=models.Q(
                    document__isnull=False, start__isnull=False, end__isnull=False
                )
                | models.Q(document__isnull=True, start__isnull=True, end__isnull=True),
                name="nugget_span_all_or_none",
            ),
            models.CheckConstraint(
                condition=models.Q(assessor__isnull=True)
                | models.Q(document__isnull=False),
                name="nugget_assessor_has_span",
            ),
        ]
        indexes = [models.Index(fields=["topic", "assessor"], name="nugget_topic_idx")]

    def __str__(self) -> str:
        return self.text[:80]

    def provenance(self) -> str:
        """Who made the nugget: the assessor's user name, or "imported from FILE"."""
        if self.bank is not None:
            return self.bank.provenance()
        return self.assessor.get_username() if self.assessor else ""
