"""``/healthz``: the database and the broker are really asked, workers are pinged; a
broker that stops and comes back under a running gunicorn gives 503s, then 200s, and
never a 500."""

import json
import os
import shutil
import subprocess
import urllib.error
import urllib.request

import pytest
from django.db import OperationalError
from django.test import Client
from django.urls import reverse

from nuggets_app.operations.services import health
from tests.helpers import free_port
from tests.integration.operations.served import gunicorn, listening, wait

pytestmark = pytest.mark.django_db
REDIS_SERVER = shutil.which("redis-server")


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


# --- a real broker restart under a running server ---------------------------------------
class _Redis:
    """A throwaway redis-server on a fixed loopback port: stoppable, restartable."""

    def __init__(self, port: int):
        self.port = port
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait(lambda: listening(self.port), "redis-server")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


def _get(url: str, cookie: str = "") -> tuple[int, dict]:
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        body = error.read()
        try:
            return error.code, json.loads(body)
        except ValueError:
            return error.code, {"body": body.decode(errors="replace")[-2000:]}


@pytest.fixture
def gunicorn_on_own_redis(transactional_db, tmp_path):
    """gunicorn serving the app, its broker (and cache) a throwaway Redis; a Celery
    worker on that Redis too. Yields (server URL, the Redis)."""
    if REDIS_SERVER is None:
        pytest.skip("redis-server is not installed")
    from tests.integration.conftest import REPO, Worker, _database_url

    redis = _Redis(free_port())
    redis.start()
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="tests.settings", DATABASE_URL=_database_url(),
        REDIS_URL=f"redis://127.0.0.1:{redis.port}/0", DATA_DIR=str(tmp_path),
        PYTHONPATH=str(REPO),
    )  # fmt: skip
    worker = Worker(env, tmp_path)
    try:
        with gunicorn(env, tmp_path, threads=2) as url:
            worker.start()
            try:
                yield url, redis
            finally:
                worker.stop()
    finally:
        redis.stop()


@pytest.mark.worker
@pytest.mark.timeout(180)
def test_healthz_is_200_or_503_never_500_while_the_broker_stops_and_restarts(
    gunicorn_on_own_redis, staff
):
    url, redis = gunicorn_on_own_redis
    client = Client()
    client.force_login(staff)
    staff_cookie = f"sessionid={client.cookies['sessionid'].value}"
    health = f"{url}{reverse('healthz')}"

    def both() -> list[tuple[int, dict]]:
        return [_get(health), _get(health, staff_cookie)]

    wait(lambda: _get(health, staff_cookie)[1].get("workers"), "the worker's pong")
    for status, body in both():
        assert (status, body["ok"], body["broker"]) == (200, True, "ok")

    seen = []
    for _ in range(2):
        redis.stop()
        down = both() + both()
        seen += down
        for status, body in down:
            assert status == 503
            assert (body["ok"], body["database"], body["workers"]) == (
                False, "ok", None,
            )  # fmt: skip
        assert down[0][1]["broker"] == "error"
        assert f"127.0.0.1:{redis.port}" in down[1][1]["broker"]

        redis.start()
        # The first requests after the restart meet the connections the server
        # opened before it: each answer is 200 or 503, and 200 comes back.
        up = both() + both()
        seen += up
        assert {status for status, _ in up} <= {200, 503}, up
        wait(lambda: _get(health)[0] == 200, "200 after the restart", 30)
        seen += both()
    assert {status for status, _ in seen} == {200, 503}
