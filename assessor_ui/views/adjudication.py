"""The adjudication queue (staff only): documents whose assessors disagree, one at a
time with each assessor's grade, time and nuggets beside the document, decided from
the keyboard. Filters travel in the query string from one document to the next."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from assessor_ui.forms.quality import AdjudicationForm, QueueFilterForm
from assessor_ui.views.decorators import staff_required
from nuggets_app.judging.selectors.disagreements import (
    Disagreement,
    adjudication_history,
    disagreement_work,
    disagreements,
)
from nuggets_app.judging.selectors.labels import aggregation_of
from nuggets_app.judging.services.adjudication import adjudication_record
from nuggets_app.judging.services.judgments import JudgingError
from nuggets_app.lib.html import sanitize_html
from nuggets_app.models import Adjudication, Collection, Document, Topic

# Keys of the adjudication page; grade keys come from the collection's scale.
KEYMAP = [
    {"keys": ["j", "n"], "action": "next", "label": "Next document of the queue"},
    {"keys": ["k", "p"], "action": "previous", "label": "Previous document"},
    {"keys": ["o"], "action": "original", "label": "Original (sanitized) HTML"},
    {"keys": ["?"], "action": "help", "label": "Show or hide this help"},
    {"keys": ["Escape"], "action": "escape", "label": "Close help, leave a text field"},
]


def _filtered(params: QueryDict, collection: Collection) -> tuple[list, str]:
    """The queue under the query string's filters, and those filters re-encoded."""
    form = QueueFilterForm(params or None)
    data = form.cleaned_data if form.is_valid() else {}
    qids = (data.get("topic") or "").split()
    items = disagreements(
        collection=collection,
        qids=qids or None,
        assessor=data.get("assessor") or None,
        spread=bool(data.get("spread")),
        open_only=bool(data.get("open")),
    )
    kept = {k: v for k, v in data.items() if v}
    return items, urlencode({k: "on" if v is True else v for k, v in kept.items()})


def _key(qid: str, docno: str) -> tuple:
    return ((0, int(qid), "") if qid.isdigit() else (1, 0, qid), docno)


def _item_url(collection: Collection, item: Disagreement | None, filters: str) -> str:
    if item is None:
        url = reverse("staff-adjudication", args=[collection.name])
        return f"{url}?{filters}" if filters else url
    query = urlencode({"qid": item.qid, "docno": item.docno})
    url = reverse("staff-adjudication-item", args=[collection.name])
    return f"{url}?{query}&{filters}" if filters else f"{url}?{query}"


def _neighbours(
    items: list[Disagreement], qid: str, docno: str
) -> tuple[Disagreement | None, Disagreement | None]:
    """The items before and after (qid, docno) in queue order (the current one may
    have left a filtered queue, as a decided one leaves "only open")."""
    here = _key(qid, docno)
    before = [i for i in items if _key(i.qid, i.docno) < here]
    after = [i for i in items if _key(i.qid, i.docno) > here]
    return (before[-1] if before else None), (after[0] if after else None)


@staff_required
@require_GET
def adjudication_queue(request: HttpRequest, name: str) -> HttpResponse:
    collection = get_object_or_404(Collection, name=name)
    items, filters = _filtered(request.GET, collection)
    context = {
        "collection": collection,
        "items": items,
        "first": _item_url(collection, items[0], filters) if items else None,
        "links": [_item_url(collection, i, filters) for i in items],
        "filter_form": QueueFilterForm(request.GET or None),
        "aggregation": aggregation_of(collection),
        "level": collection.relevance_level,
    }
    return render(request, "assessor_ui/quality/adjudication_queue.html", context)


@staff_required
@require_GET
def adjudication_item(request: HttpRequest, name: str) -> HttpResponse:
    collection = get_object_or_404(Collection, name=name)
    topic = get_object_or_404(Topic, collection=collection, qid=request.GET.get("qid"))
    document = get_object_or_404(
        Document, collection=collection, docno=request.GET.get("docno")
    )
    items, filters = _filtered(request.GET, collection)
    previous, following = _neighbours(items, topic.qid, document.docno)
    decision = Adjudication.objects.filter(topic=topic, document=document).first()
    index = next(
        (
            n
            for n, i in enumerate(items, 1)
            if (i.qid, i.docno) == (topic.qid, document.docno)
        ),
        None,
    )
    grades = collection.grades
    keymap = [
        {"keys": [str(g["key"])], "action": f"grade:{g['value']}", "label": g["label"]}
        for g in grades
        if g.get("key")
    ] + KEYMAP
    context = {
        "collection": collection,
        "topic": topic,
        "document": document,
        "html": sanitize_html(document.html) if document.html else "",
        "work": disagreement_work(topic=topic, document=document),
        "decision": decision,
        "history": adjudication_history(topic=topic, document=document),
        "grades": grades,
        "keymap": keymap,
        "index": index,
        "total": len(items),
        "previous": _item_url(collection, previous, filters) if previous else None,
        "next": _item_url(collection, following, filters) if following else None,
        "queue": _item_url(collection, None, filters),
        "filters": filters,
        "config": {"keymap": keymap},
    }
    return render(request, "assessor_ui/quality/adjudication_item.html", context)


@staff_required
@require_POST
def adjudication_save(request: HttpRequest, name: str) -> HttpResponse:
    """Store the decision, then go to the next document of the queue (or back to
    this one with the reason when it is refused)."""
    collection = get_object_or_404(Collection, name=name)
    form = AdjudicationForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The decision was not saved: it needs a grade.")
        return redirect("staff-adjudication", name=collection.name)
    data = form.cleaned_data
    topic = get_object_or_404(Topic, collection=collection, qid=data["qid"])
    document = get_object_or_404(Document, collection=collection, docno=data["docno"])
    filters = request.POST.get("filters", "")
    here = reverse("staff-adjudication-item", args=[collection.name])
    here += "?" + urlencode({"qid": topic.qid, "docno": document.docno})
    try:
        adjudication_record(
            adjudicator=request.user,
            topic=topic,
            document=document,
            relevance=data["relevance"],
            version=data["version"],
            note=data["note"],
        )
    except JudgingError as exc:
        messages.error(request, f"Not saved: {exc.message}.")
        return redirect(f"{here}&{filters}" if filters else here)
    messages.success(
        request,
        f"Topic {topic.qid}, document {document.docno}: grade {data['relevance']}.",
    )
    items, _ = _filtered(QueryDict(filters), collection)
    _, following = _neighbours(items, topic.qid, document.docno)
    return redirect(_item_url(collection, following, filters))
