"""The history of the work on one document (its assessor and staff see it) and undo
of its last change (its assessor). JSON, like the other judging endpoints."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET, require_POST

from assessor_ui.views.judge import json_error, json_login_required
from nuggets_app import access
from nuggets_app.judging.selectors.history import document_history
from nuggets_app.judging.services.judgments import JudgingError, judgment_state
from nuggets_app.judging.services.undo import change_undo


def _state(assignment, item) -> dict:
    key = {
        "owner_id": assignment.assessor_id,
        "topic_id": assignment.topic_id,
        "document_id": item.document_id,
    }
    return {
        "judgment": judgment_state(
            assessor_id=key["owner_id"],
            topic_id=key["topic_id"],
            document_id=item.document_id,
            quality_check=item.known,
        ),
        "changes": document_history(**key),
    }


@json_login_required
@require_GET
def work_history(
    request: HttpRequest, assignment_id: int, position: int
) -> HttpResponse:
    """The stored grade (relevance, version, who and when) and the changes of the
    assignment's work on the document at ``position``, newest first."""
    assignment = access.assignment_for(request.user, assignment_id)
    item = access.queue_item_for(assignment, position, text=False)
    return JsonResponse(_state(assignment, item))


@json_login_required
@require_POST
def work_undo(request: HttpRequest, assignment_id: int, position: int) -> HttpResponse:
    """Take back the last change of the assessor's own work on the document; answers
    the undo's change and the state after it (409 when nothing is left to undo)."""
    assignment = access.own_assignment_for(request.user, assignment_id)
    item = access.queue_item_for(assignment, position, text=False)
    try:
        undo = change_undo(
            actor=request.user,
            owner_id=request.user.pk,
            topic_id=assignment.topic_id,
            document_id=item.document_id,
            quality_check=item.known,
        )
    except JudgingError as exc:
        return json_error(exc)
    body = _state(assignment, item)
    body["undone"] = {"kind": undo.kind, "object": undo.object_id}
    return JsonResponse(body)
