"""Inter-assessor agreement per topic (staff only), as a page and as CSV."""

from __future__ import annotations

import csv
import functools
from collections.abc import Callable
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from nuggets_app import selectors


def staff_required(view: Callable) -> Callable:
    """Anonymous users go to the login page; logged-in non-staff get 403."""

    @login_required
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_staff:
            raise PermissionDenied("Staff only.")
        return view(request, *args, **kwargs)

    return wrapper


@staff_required
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
