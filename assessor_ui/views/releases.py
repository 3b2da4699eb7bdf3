"""The release page (staff): a collection's test-collection release as a .tar.gz."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from assessor_ui.forms.releases import ReleaseForm
from assessor_ui.views.decorators import staff_required
from nuggets_app.evaluation.services.estimates import EstimateError
from nuggets_app.evaluation.services.releases import ReleaseError, release_write
from nuggets_app.judging.selectors.labels import aggregation_of
from nuggets_app.models import Collection


@staff_required
@require_GET
def collection_release(request: HttpRequest, name: str) -> HttpResponse:
    """The form; with a job chosen, the release of that job as an archive."""
    collection = get_object_or_404(Collection, name=name)
    form = ReleaseForm(request.GET or None, collection=collection)
    error = ""
    if request.GET and form.is_valid():
        job = form.cleaned_data["job"]
        filename = f"{collection.name}-release-job{job.pk}.tar.gz"
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / filename
            try:
                release_write(
                    collection=collection,
                    job=job,
                    out=path,
                    real_names=form.cleaned_data["real_names"],
                )
            except (ReleaseError, EstimateError) as exc:
                error = f"{str(exc)[:1].upper()}{str(exc)[1:]}."
            else:
                response = HttpResponse(
                    path.read_bytes(), content_type="application/gzip"
                )
                response["Content-Disposition"] = f'attachment; filename="{filename}"'
                return response
    context = {
        "collection": collection,
        "form": form,
        "error": error,
        "aggregation": aggregation_of(collection),
    }
    status = 409 if error else 200
    return render(request, "assessor_ui/staff/release.html", context, status=status)
