"""Who may be given real work: people, not the simulation's stand-ins.

An experiment (``manage.py simulate``) judges through the product's own path as a user
named ``simulated-assessor``. Such users are marked by membership of the group
:data:`SIMULATED_GROUP` (whatever their name), and are left out of the assessors the
staff pages offer and refused by the assignment services.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import QuerySet

SIMULATED_GROUP = "simulated assessors"


def simulated_user_mark(user: Any) -> Any:
    """Mark ``user`` as a simulated assessor (the simulation calls this for its user)."""
    group, _ = Group.objects.get_or_create(name=SIMULATED_GROUP)
    user.groups.add(group)
    return user


def simulated_user(username: str) -> Any:
    """The user ``username`` (created if missing), marked as a simulated assessor."""
    user, _ = get_user_model().objects.get_or_create(username=username)
    return simulated_user_mark(user)


def is_simulated(user: Any) -> bool:
    """Whether ``user`` is a simulated assessor."""
    return user.groups.filter(name=SIMULATED_GROUP).exists()


def assessor_choices() -> QuerySet:
    """The active users who can be assigned topics, by username: not simulated ones."""
    return (
        get_user_model()
        .objects.filter(is_active=True)
        .exclude(groups__name=SIMULATED_GROUP)
        .order_by("username")
    )
