"""Error pages: every one in the site's layout, with a title and a way back."""

from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.test import Client, RequestFactory
from django.urls import reverse
from django.views.defaults import server_error

pytestmark = pytest.mark.django_db


def _in_layout(text: str, title: str, back: str) -> None:
    assert f"<title>{title} · Nugget assessment</title>" in text
    assert 'class="topbar"' in text  # the site's header, not a bare page
    assert f"<h1>{title}</h1>" in text
    assert f'href="{back}"' in text


def test_a_missing_page_is_404_in_the_layout(assessor_client):
    response = assessor_client.get("/no/such/page/")
    assert response.status_code == 404
    _in_layout(response.text, "Page not found", reverse("home"))


def test_a_refused_page_is_403_and_says_why(assessor_client):
    response = assessor_client.get(reverse("job-list"))
    assert response.status_code == 403
    _in_layout(response.text, "Not allowed", reverse("home"))
    assert "Researchers only." in response.text


def test_a_bad_request_is_400_in_the_layout(client):
    response = client.get(reverse("login"), HTTP_HOST="evil.example")
    assert response.status_code == 400
    _in_layout(response.text, "Bad request", reverse("home"))


def test_a_server_error_is_500_in_the_layout_without_the_database():
    # Django renders 500.html without a request context: nothing may need the user.
    response = server_error(RequestFactory().get("/"))
    assert response.status_code == 500
    _in_layout(response.content.decode(), "Server error", reverse("home"))


def test_a_failed_csrf_check_explains_and_leads_back(assessor):
    client = Client(enforce_csrf_checks=True)
    response = client.post(reverse("login"), {"username": "alice", "password": "x"})
    assert response.status_code == 403
    _in_layout(response.text, "This form has expired", reverse("login"))
    assert "nothing was saved" in response.text


def test_the_lockout_page_gives_a_title_the_wait_and_a_link(client, assessor, settings):
    settings.AXES_FAILURE_LIMIT = 2
    settings.AXES_COOLOFF_TIME = 0.25  # hours
    for _ in range(2):
        client.post(reverse("login"), {"username": "alice", "password": "wrong"})
    response = client.post(reverse("login"), {"username": "alice", "password": "wrong"})
    assert response.status_code == 429
    _in_layout(response.text, "Too many failed log-ins", reverse("login"))
    assert "after 2 failed log-ins" in response.text
    assert "Try again in 15 minutes" in response.text


def test_every_page_names_a_favicon_and_the_root_icon_is_served(client):
    login = client.get(reverse("login"))
    assert 'rel="icon" href="/static/assessor_ui/favicon.ico"' in login.text
    redirect = client.get("/favicon.ico")
    assert redirect.status_code == 301
    assert redirect["Location"] == "/static/assessor_ui/favicon.ico"
    icon = finders.find("assessor_ui/favicon.ico")
    assert icon
    assert Path(icon).read_bytes()[:4] == b"\0\0\1\0"  # an ICO file
