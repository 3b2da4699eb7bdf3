"""The assessor's own home: assigned topics with progress, and a CSRF token refresh."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.views.decorators.http import require_GET

from nuggets_app import access
from nuggets_app.pooling import selectors as pooling_selectors


@login_required
@require_GET
def assessor_home(request: HttpRequest) -> HttpResponse:
    """My assigned topics: judged / to judge, relevant found, nuggets, active time."""
    progress = pooling_selectors.assignment_progress(
        assignments=access.assignments_for(request.user)
    )
    resume = next((p for p in progress if p.resume_position is not None), None)
    return render(
        request,
        "assessor_ui/assessor/home.html",
        {"progress": progress, "resume": resume},
    )


@require_GET
def csrf_refresh(request: HttpRequest) -> HttpResponse:
    """Set a fresh CSRF cookie (after a login in another tab rotated the token).

    The token is also in the body, for pages that cannot read cookies.
    """
    if not request.user.is_authenticated:
        return JsonResponse(
            {"error": "Your session has ended: log in again."}, status=401
        )
    return JsonResponse({"csrfToken": get_token(request)})
