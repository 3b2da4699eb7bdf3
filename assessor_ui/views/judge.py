"""The judging page: one document of a topic's queue, relevance buttons, time on task.

Autosave endpoints answer JSON: ``{"error": ..., "field": ...}`` with 400/404/409/422 on
refusal, and 401 (not a redirect to the login page) when the session has expired, so
the page keeps its unsaved work and asks for a new login.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseNotAllowed,
    JsonResponse,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from assessor_ui.forms.assessor import (
    JudgmentForm,
    PreferencesForm,
    TimeForm,
    first_error,
)
from nuggets_app import access
from nuggets_app.inference.services.embeddings import semantic_on, stored_semantic
from nuggets_app.judging import selectors
from nuggets_app.judging.services.guidelines import (
    guidelines_current,
    guidelines_render,
)
from nuggets_app.judging.services.judgments import (
    JudgingError,
    JudgmentConflict,
    judgment_record,
    judgment_time_add,
)
from nuggets_app.judging.services.preferences import preferences_of, preferences_save
from nuggets_app.lib.html import sanitize_html
from nuggets_app.models import Nugget, Topic
from nuggets_app.pooling import selectors as pooling_selectors

# The one keymap: the JavaScript reads it (json_script) and the help overlay is
# rendered from it, so they cannot disagree. Grade keys are added per collection.
KEYMAP = [
    {"keys": ["j", "n"], "action": "next", "label": "Next document"},
    {"keys": ["k", "p"], "action": "previous", "label": "Previous document"},
    {"keys": ["x"], "action": "skip", "label": "Skip (record as seen) and go on"},
    {"keys": ["u"], "action": "next-unjudged", "label": "Next document still to judge"},
    {
        "keys": ["v"],
        "action": "select-start",
        "label": "Select the next word where you are reading",
    },
    {
        "keys": ["s"],
        "action": "select-next-sentence",
        "label": "Select the next whole sentence",
    },
    {
        "keys": ["]"],
        "action": "select-next-paragraph",
        "label": "Select the next paragraph's first sentence",
    },
    {"keys": ["w"], "action": "select-word", "label": "Extend the selection by a word"},
    {"keys": ["b"], "action": "select-back", "label": "Shrink the selection by a word"},
    {
        "keys": [")"],
        "action": "select-sentence",
        "label": "Extend the selection to the sentence end",
    },
    {
        "keys": ["}"],
        "action": "select-paragraph",
        "label": "Extend the selection to the paragraph end",
    },
    {
        "keys": ["h", "Enter"],
        "action": "nugget",
        "label": "Make a nugget of the selection",
    },
    {"keys": ["e"], "action": "edit-last", "label": "Edit the last nugget"},
    {"keys": ["t"], "action": "terms", "label": "Highlight the topic terms"},
    {
        "keys": ["a"],
        "action": "advance-toggle",
        "label": "Advance on grading: on or off",
    },
    {
        "keys": ["o"],
        "action": "original",
        "label": "Switch to the original (sanitized) HTML",
    },
    {"keys": ["z"], "action": "undo", "label": "Undo the last change of this document"},
    {
        "keys": ["g"],
        "action": "guidelines",
        "label": "Show or hide the guidelines and the topic's narrative",
    },
    {"keys": ["?"], "action": "help", "label": "Show or hide this help"},
    {
        "keys": ["Escape"],
        "action": "escape",
        "label": "Close help or guidelines, leave a text field",
    },
]


def keymap_for(grades: list[dict]) -> list[dict]:
    """The keymap with one entry per relevance grade of the collection."""
    grade_keys = [
        {"keys": [str(g["key"])], "action": f"grade:{g['value']}", "label": g["label"]}
        for g in grades
        if g.get("key")
    ]
    return grade_keys + KEYMAP


def json_login_required(view: Callable) -> Callable:
    """``login_required`` for JSON endpoints: 401 JSON instead of a redirect, and every
    refusal as ``{"error", "field"}`` JSON (a 404 for another assessor's object, 405
    for a wrong method), never Django's HTML error pages."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return JsonResponse(
                {"error": "Your session has ended: log in again.", "field": None},
                status=401,
            )
        try:
            response = view(request, *args, **kwargs)
        except Http404 as exc:
            message = str(exc) or "Not found."
            return JsonResponse({"error": message, "field": None}, status=404)
        if isinstance(response, HttpResponseNotAllowed):
            allowed = response["Allow"]
            return JsonResponse(
                {
                    "error": f"Method {request.method} not allowed: use {allowed}.",
                    "field": None,
                },
                status=405,
                headers={"Allow": allowed},
            )
        return response

    return wrapper


def json_error(exc: JudgingError) -> JsonResponse:
    return JsonResponse({"error": exc.message, "field": exc.field}, status=exc.status)


def form_error(form: Any) -> JsonResponse:
    field, message = first_error(form)
    return JsonResponse({"error": message, "field": field}, status=400)


def nugget_json(
    nugget: Nugget, viewer: Any, score: float | None = None, *, saved: bool = False
) -> dict:
    """A nugget as the page's JavaScript sees it (``saved``: just saved or edited,
    so its embedding, with the extra, is still to come)."""
    return {
        "id": nugget.pk,
        "document": nugget.document_id,
        "start": nugget.start,
        "end": nugget.end,
        "span_text": nugget.span_text,
        "text": nugget.text,
        "keywords": nugget.keywords,
        "grade": nugget.grade,
        "aspect": nugget.aspect,
        "version": nugget.version,
        "client_uuid": str(nugget.client_uuid),
        "assessor": nugget.provenance(),
        "mine": nugget.assessor_id == viewer.pk,
        "score": score,
        "semantic_pending": saved and semantic_on(),
    }


@login_required
@require_GET
def judge_continue(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Redirect to the first document still to judge (or the first of the queue)."""
    assignment = access.assignment_for(request.user, assignment_id)
    (progress,) = pooling_selectors.assignment_progress(assignments=[assignment])
    position = progress.resume_position
    if position is None:
        first = assignment.sample.documents.filter(topic_id=assignment.topic_id)
        position = first.order_by("order").values_list("order", flat=True).first()
    if position is None:
        return redirect("assessor-home")
    return redirect("judge", assignment_id=assignment.pk, position=position)


@login_required
@require_GET
def judge(request: HttpRequest, assignment_id: int, position: int) -> HttpResponse:
    """The judging page of one queue position (read-only for staff on others' work)."""
    assignment = access.assignment_for(request.user, assignment_id)
    item = access.queue_item_for(assignment, position)
    page = selectors.judge_page(assignment=assignment, item=item, viewer=request.user)
    topic: Topic = assignment.topic
    grades = topic.collection.grades
    readonly = assignment.assessor_id != request.user.pk
    config = {
        "assignment": assignment.pk,
        "readonly": readonly,
        "idleSeconds": settings.IDLE_SECONDS,
        "grades": grades,
        "keymap": keymap_for(grades),
        "positions": page.positions,
        "judged": sorted(page.judged_positions),
        "urls": _page_urls(assignment.pk),
        "doc": _document_state(page),
        "preferences": preferences_of(user=request.user),
    }
    nuggets, config["doc"]["sentences"] = _topic_nuggets(page)
    guidelines = guidelines_current(topic.collection_id)
    context = {
        "page": page,
        "topic": topic,
        "grades": grades,
        "readonly": readonly,
        "keymap": config["keymap"],
        "nuggets": nuggets,
        "semantic_on": semantic_on(),
        "config": config,
        "html": config["doc"]["html"],
        "guidelines": guidelines,
        "guidelines_html": guidelines_render(guidelines.text) if guidelines else "",
    }
    return render(request, "assessor_ui/judge/page.html", context)


@json_login_required
@require_GET
def judge_data(request: HttpRequest, assignment_id: int, position: int) -> HttpResponse:
    """One queue position as JSON, for the page to show without a full load: the same
    reads as the page; the text as segments (the page puts them in as text, never as
    markup), the original HTML sanitized for the sandboxed frame."""
    assignment = access.assignment_for(request.user, assignment_id)
    item = access.queue_item_for(assignment, position)
    page = selectors.judge_page(assignment=assignment, item=item, viewer=request.user)
    doc = _document_state(page)
    doc["segments"] = [
        [s.start, s.text, s.nuggets, s.match, s.invisible, s.code]
        for s in page.segments
    ]
    doc["nuggets"], doc["sentences"] = _topic_nuggets(page)
    doc["judged"] = sorted(page.judged_positions)
    # Aspects other assessors added since the page loaded reach the selects here.
    doc["aspects"] = assignment.topic.aspects
    return JsonResponse(doc)


def _topic_nuggets(page: selectors.JudgePage) -> tuple[list[dict], dict[int, str]]:
    """The topic's nuggets, each with the document's sentence nearest to it where
    its embeddings are stored (``semantic``: similarity, start and end; None
    otherwise), semantic evidence beside the matcher's score, and ``semantic_pending``
    when the nugget's current text is not embedded yet (the model runs after the
    save, never in a request). With them, the nearest sentences by start offset:
    hundreds of nuggets share a document's few sentences, which sent with each
    nugget were two thirds of a move's JSON."""
    texts = {n["id"]: n["text"] for n in page.topic_nuggets}
    nearest, pending = stored_semantic(
        document=page.document, nugget_ids=texts, texts=texts
    )
    sentences = {}
    for found in nearest.values():
        sentences[found["start"]] = found.pop("sentence")
    nuggets = [
        {**n, "semantic": nearest.get(n["id"]), "semantic_pending": n["id"] in pending}
        for n in page.topic_nuggets
    ]
    return nuggets, sentences


# A position placeholder in URL templates the page fills in (no queue is this long).
POSITION_MARK = 2_000_000_000


def _page_urls(assignment_id: int) -> dict[str, str]:
    mark = [assignment_id, POSITION_MARK]
    return {
        "page": reverse("judge", args=mark),
        "data": reverse("judge-data", args=mark),
        "judgment": reverse("judgment-save", args=mark),
        "time": reverse("time-save", args=mark),
        "nuggets": reverse("nugget-create", args=mark),
        "nugget": reverse("nugget-edit", args=[0]),
        "nuggetDelete": reverse("nugget-delete", args=[0]),
        "preview": reverse("nugget-preview", args=[assignment_id]),
        "aspects": reverse("aspect-create", args=[assignment_id]),
        "csrf": reverse("csrf-refresh"),
        "history": reverse("work-history", args=mark),
        "undo": reverse("work-undo", args=mark),
        "preferences": reverse("judge-preferences"),
        "login": reverse("login"),
        "home": reverse("assessor-home"),
        "mark": str(POSITION_MARK),
    }


def _document_state(page: selectors.JudgePage) -> dict[str, Any]:
    """What changes from one queue position to the next."""
    document = page.document
    return {
        "position": page.position,
        "document": document.pk,
        "docno": document.docno,
        "title": document.title,
        "relevance": page.relevance,
        "version": page.version,
        # Active seconds stored for this document (the page adds what it counts since).
        "seconds": page.active_seconds,
        "scores": {str(k): v for k, v in page.scores.items()},
        "terms": selectors.topic_term_spans(
            topic=page.assignment.topic, text=document.text
        ),
        # Sanitized again at render time: the stored copy is never trusted as safe.
        "html": sanitize_html(document.html) if document.html else "",
    }


@json_login_required
@require_POST
def judgment_save(
    request: HttpRequest, assignment_id: int, position: int
) -> HttpResponse:
    """Record a relevance grade (empty = skipped) plus active time since last report.

    With ``version`` (the one the page last saw) a grade changed since is a 409
    carrying the stored one (``current``: relevance, version, by, at); with
    ``client_uuid`` a retried save is stored once."""
    assignment = access.own_assignment_for(request.user, assignment_id)
    item = access.queue_item_for(assignment, position, text=False)
    form = JudgmentForm(request.POST)
    if not form.is_valid():
        return form_error(form)
    try:
        judgment = judgment_record(
            assessor=request.user,
            topic=assignment.topic,
            document=item.document,
            relevance=form.cleaned_data["relevance"],
            active_seconds_delta=form.cleaned_data["seconds"],
            slot=(assignment, item),
            version=form.cleaned_data["version"],
            client_uuid=form.cleaned_data["client_uuid"],
        )
    except JudgmentConflict as exc:
        body = {"error": exc.message, "field": "version", "current": exc.current}
        return JsonResponse(body, status=409)
    except JudgingError as exc:
        return json_error(exc)
    return JsonResponse(
        {
            "relevance": judgment.relevance,
            "active_seconds": judgment.active_seconds,
            "version": judgment.version,
        }
    )


@json_login_required
@require_POST
def time_save(request: HttpRequest, assignment_id: int, position: int) -> HttpResponse:
    """A heartbeat: idle-aware active seconds since the last report."""
    assignment = access.own_assignment_for(request.user, assignment_id)
    item = access.queue_item_for(assignment, position, text=False)
    form = TimeForm(request.POST)
    if not form.is_valid():
        return form_error(form)
    try:
        judgment = judgment_time_add(
            assessor=request.user,
            topic=assignment.topic,
            document=item.document,
            active_seconds_delta=form.cleaned_data["seconds"],
            slot=(assignment, item),
        )
    except JudgingError as exc:
        return json_error(exc)
    return JsonResponse({"active_seconds": judgment.active_seconds})


@json_login_required
@require_POST
def preferences_update(request: HttpRequest) -> HttpResponse:
    """Save the assessor's judging-page preferences; answers them as stored."""
    form = PreferencesForm(request.POST)
    if not form.is_valid():
        return form_error(form)
    saved = preferences_save(
        user=request.user, advance_on_grade=form.cleaned_data["advance_on_grade"]
    )
    return JsonResponse(saved)
