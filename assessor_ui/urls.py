"""URLs of the browser pages; each area keeps its patterns in assessor_ui.routes."""

from django.contrib.auth import views as auth_views
from django.urls import include, path

from assessor_ui.views import home

urlpatterns = [
    path("", home.home, name="home"),
    path("favicon.ico", home.favicon, name="favicon"),
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="assessor_ui/login.html"),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("assessor_ui.routes.judging")),
    path("", include("assessor_ui.routes.jobs")),
    path("", include("assessor_ui.routes.evaluation")),
    path("", include("assessor_ui.routes.staff")),
    path("", include("assessor_ui.routes.quality")),
    path("", include("assessor_ui.routes.judges")),
]
