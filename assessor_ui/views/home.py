"""The landing page after login: where each role starts its work."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from nuggets_app.access import is_researcher


@login_required
def home(request: HttpRequest) -> HttpResponse:
    researcher = is_researcher(request.user)
    if not researcher:
        # Assessors have one place to work: their topics.
        return redirect("assessor-home")
    return render(request, "assessor_ui/home.html", {"researcher": researcher})
