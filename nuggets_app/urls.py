"""Root URLconf: the admin, health checks (:mod:`nuggets_app.operations.views`), and
the browser pages of assessor_ui."""

from django.contrib import admin
from django.urls import include, path

from nuggets_app.operations.views import healthz, livez

# An unreachable database is 503 (retry), not 500 (a bug): see the view.
handler500 = "assessor_ui.views.errors.server_error"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("healthz/live", livez, name="livez"),
    path("", include("assessor_ui.urls")),
]
