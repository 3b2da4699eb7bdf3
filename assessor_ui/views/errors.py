"""Error pages in the site's layout, each with a title, what happened and a way back.

Django renders ``400.html``, ``403.html`` and ``404.html`` itself; ``server_error``
renders ``500.html`` without a request context (it needs no database), or answers 503
when the error was the database being unreachable. These views cover the rest: a
refused download (409), a failed CSRF check and a django-axes lockout.
"""

from __future__ import annotations

import math
import sys
from http import HTTPStatus
from typing import Any

from axes.helpers import get_cool_off, get_failure_limit
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views import defaults

# Seconds a client is asked to wait before retrying while the database is away.
RETRY_AFTER = 5
DATABASE_AWAY = (
    "The database is unavailable for a moment: nothing was saved by this request. "
    "Your page retries by itself."
)


def error_page(
    request: HttpRequest,
    *,
    status: int,
    title: str,
    message: str,
    back: str = "",
    back_label: str = "",
) -> HttpResponse:
    """The shared error page with ``status`` (the message is escaped, never raw)."""
    context = {
        "status": status,
        "phrase": HTTPStatus(status).phrase,
        "title": title,
        "message": message,
        "back": back or reverse("home"),
        "back_label": back_label or "Back to the start page",
    }
    return render(request, "assessor_ui/error.html", context, status=status)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: usually a form left open across a log-out or log-in."""
    return error_page(
        request,
        status=403,
        title="This form has expired",
        message=(
            "The page was open across a log-in or log-out (or cookies are blocked), "
            "so its security token no longer matches. Go back, reload the page and "
            "submit again: nothing was saved."
        ),
        back=reverse("login") if not request.user.is_authenticated else "",
    )


def lockout(
    request: HttpRequest, original_response: Any = None, credentials: Any = None
) -> HttpResponse:
    """``AXES_LOCKOUT_CALLABLE``: too many failed log-ins for this name and address."""
    cool_off = get_cool_off(request)
    limit = get_failure_limit(request, credentials)
    wait = (
        f"Try again in {math.ceil(cool_off.total_seconds() / 60)} minutes"
        if cool_off
        else "An administrator has to unlock the account"
    )
    return error_page(
        request,
        status=429,
        title="Too many failed log-ins",
        message=(
            f"This account is locked after {limit} failed log-ins from this address. "
            f"{wait}, or ask an administrator to reset it "
            "(manage.py axes_reset_username NAME)."
        ),
        back=reverse("login"),
        back_label="Back to the log-in page",
    )


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: an unreachable database (PostgreSQL stopped, restarting, or the
    network to it down) is 503 with ``Retry-After``, as JSON for the judging page's
    saves (which retry it) and as plain text otherwise; any other error is the usual
    500 page. Nothing here touches the database."""
    error = sys.exc_info()[1]
    if not isinstance(error, OperationalError | InterfaceError):
        return defaults.server_error(request)
    headers = {"Retry-After": str(RETRY_AFTER)}
    if "application/json" in request.headers.get("Accept", ""):
        body = {"error": DATABASE_AWAY, "field": None}
        return JsonResponse(body, status=503, headers=headers)
    return HttpResponse(
        DATABASE_AWAY, status=503, content_type="text/plain", headers=headers
    )
