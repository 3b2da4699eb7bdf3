"""The test suite's settings: the real ones, with a random SECRET_KEY for this run when
none is set. Without a key (DEBUG off, as tests run) the web server refuses to start
and nothing can sign sessions; processes the tests start (Celery workers, gunicorn)
inherit the key.

The test client and the live server speak plain HTTP and nobody runs collectstatic, so
the suite runs without an SSL redirect, Secure-only cookies or a static manifest. These
are set here, once for the whole process, rather than per test: the live server answers
in its own threads, and a request still arriving from the previous test's browser (its
favicon, say) could otherwise build the storage from settings that are being switched
back and forth, and leave every later page failing on a missing manifest entry."""

import os
import secrets

os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
# The lab's commands are installed for the suite (the simulation tests run them).
os.environ.setdefault("LAB", "1")
# The benchmark commands are installed for the suite (their --help is tested).
os.environ.setdefault("BENCHMARKS", "1")

from nuggets_app.settings import *  # noqa: F403
from nuggets_app.settings import STORAGES as _STORAGES

SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
STORAGES = {
    **_STORAGES,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# 1,000,000 PBKDF2 rounds per persona cost seconds per test on a shared 2-core box.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
