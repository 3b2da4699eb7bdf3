"""The only functions that fetch objects on a user's behalf.

Staff see everything; an assessor sees only their own assignments, judgments and
nuggets. What a user may not see raises ``Http404`` (never 403), so a guessed id does
not even reveal that the object exists.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404

from nuggets_app.models import Assignment, Nugget, SampleDocument

RESEARCHERS_GROUP = "researchers"

# request.user: an instance of the user model, or AnonymousUser (typed loosely: the
# user model is chosen by settings).
User = Any


def is_researcher(user: User) -> bool:
    """True for staff and for members of the ``researchers`` group."""
    if not getattr(user, "is_authenticated", False):
        return False
    if user.is_staff:
        return True
    return user.groups.filter(name=RESEARCHERS_GROUP).exists()


def assignments_for(user: User) -> QuerySet[Assignment]:
    """The assignments a user works on (their own, also for staff)."""
    return Assignment.objects.filter(assessor=user).select_related(
        "topic", "topic__collection", "sample"
    )


def assignment_for(user: User, pk: int) -> Assignment:
    """One assignment: the user's own, or any for staff; ``Http404`` otherwise."""
    qs = Assignment.objects.select_related(
        "topic", "topic__collection", "sample", "assessor"
    )
    if not user.is_staff:
        qs = qs.filter(assessor=user)
    try:
        return qs.get(pk=pk)
    except Assignment.DoesNotExist:
        raise Http404("No such assignment.") from None


def own_assignment_for(user: User, pk: int) -> Assignment:
    """An assignment the user may write to: only their own, staff included.

    Judgments and nuggets are always attributed to the person who makes them, so even
    staff cannot judge inside somebody else's assignment.
    """
    assignment = assignment_for(user, pk)
    if assignment.assessor_id != user.pk:
        raise Http404("No such assignment.")
    return assignment


def queue_item_for(
    assignment: Assignment, position: int, *, text: bool = True
) -> SampleDocument:
    """The document at ``position`` (its queue order) of an assignment, drawn or a
    known answer; without the document's text and HTML when ``text`` is False (a save
    that needs neither)."""
    qs = SampleDocument.queue.select_related("document")
    if not text:
        qs = qs.defer("document__text", "document__html")
    try:
        return qs.get(
            sample_id=assignment.sample_id, topic_id=assignment.topic_id, order=position
        )
    except SampleDocument.DoesNotExist:
        raise Http404("No document at this position.") from None


def nugget_for(user: User, pk: int) -> Nugget:
    """A nugget the user may change: only their own; ``Http404`` otherwise."""
    try:
        return Nugget.objects.select_related("topic", "topic__collection").get(
            pk=pk, assessor=user
        )
    except Nugget.DoesNotExist:
        raise Http404("No such nugget.") from None


def topic_nuggets_visible(
    user: User, topic_id: int, *, shared: bool = True
) -> QuerySet[Nugget]:
    """A topic's nuggets a user may read, for a topic the user was already allowed to
    open: staff all; an assessor their own, plus others' when nugget sharing is on
    (``settings.NUGGETS_SHARED``, default on, and ``shared``: the sample's own
    setting, ``Sample.nuggets_shared``).
    """
    from django.conf import settings

    qs = Nugget.objects.filter(topic_id=topic_id)
    if user.is_staff or (settings.NUGGETS_SHARED and shared):
        return qs
    return qs.filter(assessor=user)
