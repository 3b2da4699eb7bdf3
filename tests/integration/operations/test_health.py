"""``/healthz``: the database and the broker are really asked, workers are pinged."""

import pytest
from django.db import OperationalError
from django.test import Client
from django.urls import reverse

from nuggets_app.operations.services import health

pytestmark = pytest.mark.django_db


def test_a_working_deployment_is_healthy(staff_client, settings):
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL")
    response = Client().get(reverse("healthz"))
    assert response.status_code == 200
    body = response.json()
    assert (body["ok"], body["database"], body["broker"]) == (True, "ok", "ok")
    assert isinstance(body["workers"], int)
    staff = staff_client.get(reverse("healthz")).json()
    assert isinstance(staff["workers"], list)
    assert len(staff["workers"]) == body["workers"]


def test_an_unreachable_broker_is_unhealthy(staff_client, broker_down):
    response = Client().get(reverse("healthz"))
    assert response.status_code == 503
    assert response.json() == {
        "ok": False, "database": "ok", "broker": "error", "workers": None,
    }  # fmt: skip
    detail = staff_client.get(reverse("healthz")).json()["broker"]
    assert "redis://127.0.0.1:9/" in detail
    assert "unreachable" in detail


class _DeadConnection:
    """Stands for a database connection whose server has gone away."""

    def cursor(self):
        raise OperationalError("server closed the connection unexpectedly")


def test_an_unreachable_database_is_unhealthy(client, monkeypatch):
    monkeypatch.setattr(health, "connection", _DeadConnection())
    response = client.get(reverse("healthz"))
    assert response.status_code == 503
    body = response.json()
    assert (body["ok"], body["database"]) == (False, "error")


def test_the_liveness_probe_needs_nothing(client, monkeypatch):
    monkeypatch.setattr(health, "connection", _DeadConnection())
    response = client.get(reverse("livez"))
    assert (response.status_code, response.content) == (200, b"ok")
