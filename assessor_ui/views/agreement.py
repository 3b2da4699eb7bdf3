"""Inter-assessor agreement per topic (staff only), as a page and as CSV."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from assessor_ui.views.decorators import staff_required
from nuggets_app.judging.selectors import agreement as judging_agreement
from nuggets_app.judging.selectors import quality as judging_quality
from nuggets_app.lib.csvout import csv_writer


@staff_required
@require_GET
def agreement(request: HttpRequest) -> HttpResponse:
    """Percent agreement, Cohen's kappa and nugget span overlap; ``?format=csv``."""
    pairs = judging_agreement.topic_agreement()
    if request.GET.get("format") == "csv":
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="agreement.csv"'
        writer = csv_writer(response)
        writer.writerow(judging_agreement.PairAgreement.CSV_HEADER)
        for pair in pairs:
            writer.writerow(pair.csv_row())
        return response
    return render(
        request,
        "assessor_ui/agreement/page.html",
        {"pairs": pairs, "adjudicated": judging_quality.adjudicated_agreement()},
    )
