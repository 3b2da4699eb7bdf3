"""Who may call a view: decorators shared by the researcher pages."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from nuggets_app.access import is_researcher


def researcher_required(view: Callable) -> Callable:
    """Logged in (else the login page), and staff or a researcher (else 403)."""

    @login_required
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not is_researcher(request.user):
            raise PermissionDenied("Researchers only.")
        return view(request, *args, **kwargs)

    return wrapper


def staff_required(view: Callable) -> Callable:
    """Logged in (else the login page), and staff (else 403)."""

    @login_required
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_staff:
            raise PermissionDenied("Staff only.")
        return view(request, *args, **kwargs)

    return wrapper
