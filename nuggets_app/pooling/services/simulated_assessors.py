"""The simulation's stand-ins for assessors: users marked as simulated, whom the staff
pages do not offer and the assignment services refuse
(:data:`nuggets_app.pooling.selectors.SIMULATED_GROUP`)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from nuggets_app.pooling.selectors import SIMULATED_GROUP


def simulated_user_mark(user: Any) -> Any:
    """Mark ``user`` as a simulated assessor (the simulation calls this for its user)."""
    group, _ = Group.objects.get_or_create(name=SIMULATED_GROUP)
    user.groups.add(group)
    return user


def simulated_user(username: str) -> Any:
    """The user ``username`` (created if missing), marked as a simulated assessor."""
    user, _ = get_user_model().objects.get_or_create(username=username)
    return simulated_user_mark(user)
