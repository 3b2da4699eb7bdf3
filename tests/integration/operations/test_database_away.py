"""PostgreSQL stops and comes back under a running gunicorn while a client saves
judgments as the judging page does (each save with its version and its own id, retried
on 5xx and on network errors): ``/healthz`` answers only 200 or 503, promptly, saves
are refused with 503 while the database is away, and afterwards the database holds
exactly what the client was told, each save once.

The PostgreSQL is a throwaway cluster of the test's own, on its own port."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pytest

from tests.helpers import free_port
from tests.integration.operations.served import REPO, gunicorn, wait
from tests.services import as_postgres_user, postgres_binary

pytestmark = pytest.mark.timeout(300)
CSRF = "a" * 32  # a token of the form Django issues; cookie and header must agree
HEALTH_SECONDS = 10  # the connect timeout (5 s) and some slack


class _Postgres:
    """A throwaway PostgreSQL cluster from the installed binaries: stop, start."""

    def __init__(self) -> None:
        initdb, self.pg_ctl = postgres_binary("initdb"), postgres_binary("pg_ctl")
        if not (initdb and self.pg_ctl):
            pytest.skip("PostgreSQL's initdb and pg_ctl are not installed")
        self.runner = as_postgres_user()
        self.folder = Path(tempfile.mkdtemp(prefix="nuggets-away-"))
        if self.runner:
            shutil.chown(self.folder, "postgres")
        self.data, self.port = self.folder / "data", free_port()
        subprocess.run(
            [*self.runner, initdb, "-A", "trust", "-U", "postgres", "-D", str(self.data)],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def _ctl(self, *args: str) -> None:
        options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 "
            "-c fsync=off"
        )
        subprocess.run(
            [*self.runner, self.pg_ctl, "-D", str(self.data), "-o", options,
             "-l", str(self.folder / "log"), "-w", *args],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip

    def start(self) -> None:
        self._ctl("start")

    def stop(self) -> None:
        self._ctl("-m", "fast", "stop")

    def remove(self) -> None:
        subprocess.run(
            [*self.runner, self.pg_ctl, "-D", str(self.data), "-m", "immediate",
             "stop"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
        )  # fmt: skip
        shutil.rmtree(self.folder, ignore_errors=True)


def _request(url: str, data: dict | None = None, cookie: str = "") -> tuple:
    """(status or None when the connection failed, JSON body, seconds taken)."""
    headers = {"Accept": "application/json"}
    if cookie:
        headers.update(Cookie=cookie, **({"X-CSRFToken": CSRF} if data else {}))
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, headers=headers)
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    except OSError:
        return None, {}, time.monotonic() - started
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = {"text": raw.decode(errors="replace")[-500:]}
    return status, parsed, time.monotonic() - started


@pytest.fixture
def served_from_own_postgres(tmp_path):
    """A throwaway PostgreSQL with the judging world, served by gunicorn (sessions
    cached in the suite's Redis, as deployed). Yields (URL, world, the PostgreSQL)."""
    postgres = _Postgres()
    try:
        postgres.start()
        env = dict(os.environ)
        env.update(
            DJANGO_SETTINGS_MODULE="tests.settings", DATABASE_URL=postgres.url,
            DATA_DIR=str(tmp_path), PYTHONPATH=str(REPO),
        )  # fmt: skip
        built = subprocess.run(
            [sys.executable, "-m", "tests.integration.worlds.database"],
            cwd=REPO, env=env, check=True, capture_output=True, text=True,
        )  # fmt: skip
        world = json.loads(built.stdout.strip().splitlines()[-1])
        with gunicorn(env, tmp_path, threads=4) as url:
            yield url, world, postgres
    finally:
        postgres.remove()


class _Assessor(threading.Thread):
    """Grades each document 1 then 0, as the page does: each save with the version
    last answered and its own id, retried until it gets an answer other than 5xx."""

    def __init__(self, url: str, world: dict) -> None:
        super().__init__(daemon=True)
        self.url, self.world = url, world
        self.cookie = f"sessionid={world['session']}; csrftoken={CSRF}"
        self.told: dict[int, list[tuple[int, int, str]]] = {}
        self.statuses: list[int | None] = []
        self.refused: list[tuple] = []

    def save(self, position: int, relevance: int, version: int) -> dict:
        url = f"{self.url}/assess/{self.world['assignment']}/{position}/judgment"
        data = {
            "relevance": relevance, "seconds": 1, "version": version,
            "client_uuid": str(uuid.uuid4()),
        }  # fmt: skip
        while True:
            status, body, _ = _request(url, data, self.cookie)
            self.statuses.append(status)
            if status == 200:
                self.told.setdefault(position, []).append(
                    (relevance, body["version"], data["client_uuid"])
                )
                return body
            if status is not None and status < 500:
                self.refused.append((position, relevance, status, body))
                return {"version": version}
            time.sleep(0.2)

    def run(self) -> None:
        for position in self.world["positions"]:
            version = 0
            for relevance in (1, 0):
                version = self.save(position, relevance, version)["version"]
                time.sleep(0.1)


def _stored(postgres: _Postgres) -> tuple[dict, dict]:
    """The judgments and their history's save ids, by document number."""
    import psycopg2

    with psycopg2.connect(postgres.url) as conn:
        cursor = conn.cursor()
        cursor.execute(
            "SELECT d.docno, j.relevance, j.version FROM nuggets_app_judgment j "
            "JOIN nuggets_app_document d ON d.id = j.document_id"
        )
        judgments = {docno: (rel, version) for docno, rel, version in cursor}
        cursor.execute(
            "SELECT d.docno, c.client_uuid::text FROM nuggets_app_workchange c "
            "JOIN nuggets_app_document d ON d.id = c.document_id ORDER BY c.id"
        )
        changes: dict[str, list[str]] = {}
        for docno, client_uuid in cursor:
            changes.setdefault(docno, []).append(client_uuid)
    conn.close()
    return judgments, changes


def test_judgments_saved_across_a_database_restart_are_stored_exactly_once(
    served_from_own_postgres,
):
    url, world, postgres = served_from_own_postgres
    health = f"{url}/healthz"
    assert _request(health)[0] == 200
    assessor = _Assessor(url, world)
    assessor.start()
    wait(lambda: sum(map(len, assessor.told.values())) >= 3, "saves before", 60)

    postgres.stop()
    down = [_request(health) for _ in range(3)]
    wait(lambda: assessor.statuses.count(503) >= 3, "saves refused while away", 60)
    down += [_request(health)]
    postgres.start()
    after = []
    wait(lambda: after.append(_request(health)) or after[-1][0] == 200, "200", 60)
    assessor.join(120)
    assert not assessor.is_alive()

    # /healthz: only 200 or 503, each within its timeout; 503 all the while away.
    assert [status for status, _, _ in down] == [503] * len(down)
    assert {status for status, _, _ in after} <= {200, 503}
    assert max(seconds for _, _, seconds in down + after) < HEALTH_SECONDS
    # Saves: refused with 503 while away (never 500), none refused for good.
    assert set(assessor.statuses) <= {200, 503, None}, assessor.statuses
    assert assessor.refused == []
    # The database holds what the client was told: every acknowledged save once.
    judgments, changes = _stored(postgres)
    told = {f"away-{p - 1}": saves for p, saves in assessor.told.items()}
    assert sorted(told) == sorted(judgments) == sorted(changes)
    for docno, saves in told.items():
        assert [version for _, version, _ in saves] == [1, 2]
        assert judgments[docno] == (saves[-1][0], saves[-1][1])
        assert changes[docno] == [client_uuid for _, _, client_uuid in saves]
