"""Inter-assessor agreement per topic (staff only), as a page and as CSV."""

from __future__ import annotations

import csv

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from nuggets_app import selectors


@staff_member_required
@require_GET
def agreement(request: HttpRequest) -> HttpResponse:
    """Percent agreement, Cohen's kappa and nugget span overlap; ``?format=csv``."""
    pairs = selectors.topic_agreement()
    if request.GET.get("format") == "csv":
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="agreement.csv"'
        writer = csv.writer(response, lineterminator="\n")
        writer.writerow(selectors.PairAgreement.CSV_HEADER)
        for pair in pairs:
            writer.writerow(pair.csv_row())
        return response
    return render(request, "assessor_ui/agreement/page.html", {"pairs": pairs})
