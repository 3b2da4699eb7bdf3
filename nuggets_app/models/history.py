"""The history of human work: every change of a judgment or an assessor's nugget."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from .collections import Document
from .topics import Topic


class WorkChange(models.Model):
    """One change of a judgment, a nugget or an adjudicated decision: whose work (``owner``), who made the
    change (``actor``: the assessor, or staff correcting it), when, and the row's
    fields before and after (``None`` for a row created or deleted)."""

    JUDGMENT = "judgment"
    NUGGET = "nugget"
    ADJUDICATION = "adjudication"
    KINDS = [
        (JUDGMENT, "judgment"),
        (NUGGET, "nugget"),
        (ADJUDICATION, "adjudication"),
    ]

    kind = models.CharField(max_length=16, choices=KINDS)
    # The judgment's or nugget's primary key (a deleted nugget keeps its history).
    object_id = models.PositiveIntegerField()
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    # The change this one takes back (an undo), and whether it was taken back.
    undo_of = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    undone = models.BooleanField(default=False)
    # The client's id of the save: a retried request finds its change, never twice.
    client_uuid = models.UUIDField(null=True, blank=True, unique=True)
    note = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(
                fields=["owner", "topic", "document", "id"], name="work_change_doc_idx"
            ),
            models.Index(fields=["kind", "object_id"], name="work_change_object_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.object_id} by {self.actor_id} at {self.at:%Y-%m-%d %H:%M}"
