"""Root URLconf: the admin, health checks, and the browser pages of assessor_ui."""

from django.contrib import admin
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import include, path

from nuggets_app.operations.services.health import health_public, health_report


def healthz(request: HttpRequest) -> JsonResponse:
    """The database and the broker answer (200) or not (503), and which workers answer
    a ping. Staff see the errors; anyone else only whether each part is ok."""
    report = health_report()
    if not _staff(request):
        report = health_public(report)
    return JsonResponse(report, status=200 if report["ok"] else 503)


def _staff(request: HttpRequest) -> bool:
    """Whether a staff member asks; someone whose session cannot be read (the
    database down) is answered as anyone: the health check must answer."""
    try:
        return bool(request.user.is_authenticated and request.user.is_staff)
    except Exception:
        return False


def livez(request: HttpRequest) -> HttpResponse:
    """The web process answers (no database, no broker): a liveness probe."""
    return HttpResponse("ok", content_type="text/plain")


# An unreachable database is 503 (retry), not 500 (a bug): see the view.
handler500 = "assessor_ui.views.errors.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("healthz/live", livez, name="livez"),
    path("", include("assessor_ui.urls")),
]
