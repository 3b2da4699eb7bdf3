"""Field declarations several models share."""

from django.conf import settings
from django.db import models


def user_who_made_it(related_name: str | None = "+") -> models.ForeignKey:
    """The user who made or started a row; optional, and the row outlives the user
    (the link is emptied when the account is deleted)."""
    return models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name=related_name,
    )
