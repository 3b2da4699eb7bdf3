"""Browser tests: the live server must speak plain HTTP from its first request.

Middleware reads SECURE_SSL_REDIRECT once, when the session-wide live server builds
its handler, so the override has to be in place before that (the per-test settings
fixture comes too late)."""

import pytest
from django.test.utils import override_settings


@pytest.fixture(scope="session", autouse=True)
def _plain_http_live_server():
    with override_settings(
        SECURE_SSL_REDIRECT=False, SESSION_COOKIE_SECURE=False, CSRF_COOKIE_SECURE=False
    ):
        yield
