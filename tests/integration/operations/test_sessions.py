"""Sessions read through a cache that fails (Redis down): the database answers and the
request goes on."""

import pytest
from django.urls import reverse

from nuggets_app.lib.sessions import SessionStore

pytestmark = pytest.mark.django_db
NOWHERE = "redis://127.0.0.1:9/0"  # the discard port: nothing listens


@pytest.fixture
def dead_cache(settings):
    settings.SESSION_ENGINE = "nuggets_app.lib.sessions"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": NOWHERE,
        }
    }


def test_a_session_is_saved_read_and_deleted_while_the_cache_refuses(dead_cache):
    store = SessionStore()
    store["qid"] = "TS14.25"
    store.save()
    key = store.session_key
    again = SessionStore(key)
    assert again["qid"] == "TS14.25"
    assert again.exists(key)
    again.delete()
    assert not SessionStore(key).exists(key)


def test_a_logged_in_page_and_healthz_answer_while_the_cache_refuses(
    client, staff, dead_cache
):
    client.force_login(staff)
    assert client.get(reverse("home")).status_code == 200
    body = client.get(reverse("healthz")).json()
    # Staff still see the parts' messages: the session was read from the database.
    assert body["database"] == "ok"
    assert isinstance(body["broker"], str)
