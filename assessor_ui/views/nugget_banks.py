"""Nugget bank downloads (staff): a collection's or a sample's nuggets as a file."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from assessor_ui.views.decorators import staff_required
from nuggets_app.collection.services.nugget_bank_exports import (
    NuggetExportError,
    nugget_bank_export,
)
from nuggets_app.models import Collection, Sample

SUFFIXES = {"jsonl": "jsonl", "rag": "rag.jsonl", "trec-qa": "trecqa.txt"}
TYPES = {"jsonl": "application/x-ndjson", "rag": "application/x-ndjson"}


def _download(
    collection: Collection, sample: Sample | None, fmt: str, stem: str
) -> HttpResponse:
    if fmt not in SUFFIXES:
        return HttpResponse(
            f"Unknown format {fmt!r}: one of {', '.join(SUFFIXES)}.",
            status=400,
            content_type="text/plain; charset=utf-8",
        )
    try:
        export = nugget_bank_export(collection=collection, sample=sample, format=fmt)
    except NuggetExportError as exc:
        return HttpResponse(
            f"{str(exc)[:1].upper()}{str(exc)[1:]}.",
            status=404,
            content_type="text/plain; charset=utf-8",
        )
    response = HttpResponse(
        export.text,
        content_type=f"{TYPES.get(fmt, 'text/plain')}; charset=utf-8",
    )
    filename = f"{stem}.nuggets.{SUFFIXES[fmt]}"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@staff_required
def collection_nuggets(request: HttpRequest, name: str) -> HttpResponse:
    """The collection's nugget bank (``?format=jsonl|rag|trec-qa``)."""
    collection = get_object_or_404(Collection, name=name)
    fmt = request.GET.get("format", "jsonl")
    return _download(collection, None, fmt, collection.name)


@staff_required
def sample_nuggets(request: HttpRequest, pk: int) -> HttpResponse:
    """The nuggets of a sample's judged documents (``?format=...``)."""
    sample = get_object_or_404(Sample.objects.select_related("pool__collection"), pk=pk)
    fmt = request.GET.get("format", "jsonl")
    collection = sample.pool.collection
    return _download(collection, sample, fmt, f"{collection.name}-{sample.name}")
