"""An assessor's preferences for the judging page, one row per user."""

from django.conf import settings
from django.db import models


class AssessorPreference(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="assessor_preference",
    )
    # Grading a document moves on to the next one (one key per document, not two).
    advance_on_grade = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"preferences of {self.user}"
