"""Shared fixtures: the three personas every view test uses, and data paths."""

import os
from pathlib import Path

import pytest

# The matcher's persistent stem table stays out of the user's cache during tests (the
# tests of matcher.stems point it at their own files); worker processes inherit this.
os.environ.setdefault("MATCHER_STEM_TABLE", "off")

REPO = Path(__file__).resolve().parent.parent
TEST_DATA = REPO / "tests" / "data"
# Real public collections, cut to what the tests read (tests/data/public/README.md).
SHARED_DATA = TEST_DATA / "public"


@pytest.fixture
def shared_data() -> Path:
    """The real public test collections kept in the repository (see each README)."""
    return SHARED_DATA


@pytest.fixture(autouse=True)
def database_quiet(request):
    """A test's own work ends inside the test. After a test that commits (a live
    server, a worker), the database is emptied for the next one; a write still running
    then (a saved nugget's embedding on the background thread, a request the page sent
    last) takes its locks in another order than the emptying, and PostgreSQL stops the
    emptying as a deadlock. So before the emptying: wait for the background queue,
    then for every other session on the test database to be idle."""
    commits = _commits(request)
    if commits:
        # Set up first, so torn down (emptied) after this fixture's waiting.
        request.getfixturevalue("transactional_db")
    yield
    from nuggets_app.operations import background

    assert background.background_wait(120), "background work still running after 120 s"
    if commits:
        _other_sessions_idle(timeout=60)


def _commits(request) -> bool:
    marker = request.node.get_closest_marker("django_db")
    transaction = marker is not None and (
        marker.kwargs.get("transaction") or (marker.args and marker.args[0])
    )
    names = request.fixturenames
    return bool(transaction) or "transactional_db" in names or "live_server" in names


def _other_sessions_idle(timeout: float) -> None:
    """Until no other session on the test database has been busy for 0.3 s (a request
    the page sent as it was left may reach the server a moment later)."""
    import time

    from django.db import connection

    if connection.vendor != "postgresql":
        return
    deadline, quiet_since = time.monotonic() + timeout, time.monotonic()
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                "current_database() AND pid <> pg_backend_pid() AND state <> 'idle'"
            )
            if cursor.fetchone()[0]:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= 0.3:
                return
            time.sleep(0.05)


@pytest.fixture
def assessor(db):
    from tests.factories import UserFactory

    return UserFactory(username="alice")


@pytest.fixture
def other_assessor(db):
    from tests.factories import UserFactory

    return UserFactory(username="bob")


@pytest.fixture
def staff(db):
    from tests.factories import UserFactory

    return UserFactory(username="root", is_staff=True, is_superuser=True)


@pytest.fixture
def assessor_client(client, assessor):
    client.force_login(assessor)
    return client


@pytest.fixture
def staff_client(client, staff):
    client.force_login(staff)
    return client


def _hypothesis_profiles() -> None:
    import os

    from hypothesis import settings

    # By default the same examples every run and no example database, so that
    # `make test` passes or fails alike on every machine; HYPOTHESIS_PROFILE=explore
    # searches new random examples (no deadline either way: speed lives in benchmarks).
    settings.register_profile(
        "deterministic", derandomize=True, database=None, deadline=None
    )
    settings.register_profile("explore", deadline=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


_hypothesis_profiles()
