"""An assessor's judging-page preferences: read with defaults, saved as they change."""

from __future__ import annotations

from typing import Any

from nuggets_app.models import AssessorPreference


def preferences_of(*, user: Any) -> dict[str, bool]:
    """The user's preferences for the judging page (the defaults when never saved)."""
    found = AssessorPreference.objects.filter(user_id=user.pk).first()
    return {"advance_on_grade": bool(found and found.advance_on_grade)}


def preferences_save(*, user: Any, advance_on_grade: bool) -> dict[str, bool]:
    """Store the user's preferences (one upsert) and return them."""
    AssessorPreference.objects.update_or_create(
        user_id=user.pk, defaults={"advance_on_grade": advance_on_grade}
    )
    return {"advance_on_grade": advance_on_grade}
