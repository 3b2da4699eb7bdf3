"""Nugget autosave endpoints (create, edit, delete), the live match preview, and new
aspects of the topic from the nugget form."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET, require_POST

from assessor_ui.forms.assessor import (
    AspectCreateForm,
    NuggetCreateForm,
    NuggetDeleteForm,
    NuggetUpdateForm,
    PreviewForm,
)
from assessor_ui.views.judge import (
    form_error,
    json_error,
    json_login_required,
    nugget_json,
)
from nuggets_app import access
from nuggets_app.collection.services.aspects import (
    AspectError,
    DuplicateAspect,
    aspect_create,
)
from nuggets_app.judging import selectors
from nuggets_app.judging.services.judgments import JudgingError
from nuggets_app.judging.services.nuggets import (
    NuggetConflict,
    nugget_delete,
    nugget_save,
    nugget_update,
)


@json_login_required
@require_POST
def nugget_create(
    request: HttpRequest, assignment_id: int, position: int
) -> HttpResponse:
    """Create a nugget from a selection; 201 when new, 200 for a replayed client_uuid."""
    assignment = access.own_assignment_for(request.user, assignment_id)
    item = access.queue_item_for(assignment, position)
    form = NuggetCreateForm(request.POST)
    if not form.is_valid():
        return form_error(form)
    data = form.cleaned_data
    try:
        nugget, created = nugget_save(
            assessor=request.user,
            topic=assignment.topic,
            document=item.document,
            start=data["start"],
            end=data["end"],
            text=data["text"],
            keywords=data["keywords"],
            grade=data["grade"],
            aspect=data["aspect"],
            client_uuid=data["client_uuid"],
            span_text=data["span_text"],
            slot=(assignment, item),
        )
    except JudgingError as exc:
        return json_error(exc)
    return JsonResponse(
        _with_warning(nugget, request.user, saved=created),
        status=201 if created else 200,
    )


@json_login_required
@require_POST
def nugget_edit(request: HttpRequest, pk: int) -> HttpResponse:
    """Replace a nugget's text, keywords, grade and aspect at the version last seen."""
    nugget = access.nugget_for(request.user, pk)
    form = NuggetUpdateForm(request.POST)
    if not form.is_valid():
        return form_error(form)
    data = form.cleaned_data
    try:
        nugget = nugget_update(
            assessor=request.user,
            nugget=nugget,
            version=data["version"],
            text=data["text"],
            keywords=data["keywords"],
            grade=data["grade"],
            aspect=data["aspect"],
        )
    except NuggetConflict as exc:
        body: dict[str, Any] = {"error": exc.message, "field": "version"}
        body["current"] = nugget_json(exc.current, request.user)
        return JsonResponse(body, status=409)
    except JudgingError as exc:
        return json_error(exc)
    return JsonResponse(_with_warning(nugget, request.user, saved=True))


def _with_warning(nugget, viewer, *, saved: bool) -> dict:
    """The nugget's JSON (``saved``: its embedding, with the extra, still to come),
    with ``warning`` when the topic has its text already."""
    warning = selectors.nugget_text_twins(viewer=viewer, nugget=nugget)
    return {**nugget_json(nugget, viewer, saved=saved), "warning": warning}


@json_login_required
@require_POST
def nugget_remove(request: HttpRequest, pk: int) -> HttpResponse:
    """Delete the user's own nugget."""
    form = NuggetDeleteForm(request.POST)
    if not form.is_valid():
        return form_error(form)
    # A repeated delete of a nugget already gone answers 404 like a guessed id; the
    # page treats 404 on delete as done.
    nugget = access.nugget_for(request.user, pk)
    try:
        nugget_delete(
            assessor=request.user, nugget=nugget, version=form.cleaned_data["version"]
        )
    except JudgingError as exc:
        return json_error(exc)
    return JsonResponse({"deleted": pk})


@json_login_required
@require_GET
def nugget_preview_counts(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """How many judged relevant / non-relevant sample documents a draft would match."""
    assignment = access.assignment_for(request.user, assignment_id)
    form = PreviewForm(request.GET)
    if not form.is_valid():
        return form_error(form)
    counts = selectors.nugget_preview(
        assignment=assignment,
        text=form.cleaned_data["text"],
        keywords=form.cleaned_data["keywords"],
    )
    return JsonResponse(counts)


@json_login_required
@require_POST
def topic_aspect_create(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Add an aspect to the assignment's topic (its assessor, or staff); 201 with the
    aspect, 409 with the existing one for a label the topic already has."""
    assignment = access.assignment_for(request.user, assignment_id)
    form = AspectCreateForm(request.POST)
    if not form.is_valid():
        return form_error(form)
    try:
        aspect = aspect_create(
            user=request.user,
            topic=assignment.topic,
            text=form.cleaned_data["aspect_text"],
        )
    except DuplicateAspect as exc:
        body = {"error": exc.message, "field": exc.field, "aspect": exc.existing}
        return JsonResponse(body, status=409)
    except AspectError as exc:
        return JsonResponse({"error": exc.message, "field": exc.field}, status=400)
    return JsonResponse(
        {"aspect": aspect, "aspects": assignment.topic.aspects}, status=201
    )
