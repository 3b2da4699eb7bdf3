"""The landing page after login: where each role starts its work."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static

from nuggets_app.access import is_researcher


@login_required
def home(request: HttpRequest) -> HttpResponse:
    researcher = is_researcher(request.user)
    if not researcher:
        # Assessors have one place to work: their topics.
        return redirect("assessor-home")
    return render(request, "assessor_ui/home.html", {"researcher": researcher})


def favicon(request: HttpRequest) -> HttpResponse:
    """``/favicon.ico`` for pages that name no icon (the admin, downloads)."""
    response = redirect(static("assessor_ui/favicon.ico"), permanent=True)
    response["Cache-Control"] = "public, max-age=86400"
    return response
