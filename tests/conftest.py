"""Shared fixtures: the three personas every view test uses, and data paths."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
TEST_DATA = REPO / "tests" / "data"


@pytest.fixture
def shared_data() -> Path:
    """The real public test collections (see each folder's README)."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"shared test data not found at {SHARED_DATA}")
    return SHARED_DATA


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


@pytest.fixture(autouse=True)
def _plain_http_test_settings(settings):
    """The test client and the live server speak plain HTTP and nobody runs collectstatic:
    no SSL redirect, no Secure-only cookies, static files without a manifest; and a fast
    password hasher."""
    settings.SECURE_SSL_REDIRECT = False
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    # 1,000,000 PBKDF2 rounds per persona cost seconds per test on a shared 2-core box.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {
            "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        },
    }


def _hypothesis_profiles() -> None:
    from hypothesis import settings

    # CI: same examples every run, no example database; locally: random, still no deadline
    # (speed lives in benchmarks, not tests).
    settings.register_profile("ci", derandomize=True, database=None, deadline=None)
    settings.register_profile("dev", deadline=None)
    import os

    settings.load_profile("ci" if os.environ.get("CI") else "dev")


_hypothesis_profiles()
