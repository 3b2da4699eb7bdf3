"""The answers page (researchers): generated answers scored by the collection's
nuggets, beside Evaluate runs."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from assessor_ui.forms.answers import AnswersForm
from assessor_ui.views.decorators import researcher_required
from nuggets_app.evaluation.services.answers import (
    INTERVAL_NOTE,
    AnswersError,
    answers_evaluate,
)
from nuggets_app.importers.errors import ImportFormatError
from nuggets_app.inference.services.embeddings import semantic_status
from nuggets_app.models import Collection

SHOWN_ANSWERS = 200


@researcher_required
def evaluation_answers(request: HttpRequest, pk: int) -> HttpResponse:
    """Upload answers (POST), see the per-system table and each answer's nuggets."""
    collection = get_object_or_404(Collection, pk=pk)
    form = AnswersForm(
        request.POST or None, request.FILES or None, collection=collection
    )
    result, error = None, ""
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["answers"]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "answers.jsonl"
            with path.open("wb") as fh:
                for chunk in upload.chunks():
                    fh.write(chunk)
            try:
                result = answers_evaluate(
                    collection=collection,
                    path=path,
                    bank=form.cleaned_data["bank"] or None,
                    threshold=form.cleaned_data["threshold"],
                )
            except (ImportFormatError, AnswersError) as exc:
                error = str(exc).replace(str(path), upload.name)
    context = {
        "collection": collection,
        "page": "answers",
        "form": form,
        "result": result,
        "shown": result.answers[:SHOWN_ANSWERS] if result else [],
        "error": error,
        "interval_note": INTERVAL_NOTE,
        "semantic_status": semantic_status(),
    }
    status = 400 if error else 200
    return render(
        request, "assessor_ui/evaluation/answers.html", context, status=status
    )
