"""Sessions kept in the database and read through the cache (Redis), where a failing
cache costs a database read, never the request.

Django's ``cached_db`` store already reads past a failing cache, but then writes the
session it read from the database back to that cache unguarded: while Redis was down
or restarting every request of a logged-in user (``/healthz`` included) answered 500.
Here every cache call that fails is logged and counts as a miss.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.sessions.backends.cached_db import SessionStore as CachedDBStore

logger = logging.getLogger("nuggets_app.lib.sessions")


class _CacheOrMiss:
    """The session cache, whose failing calls are logged and count as a miss."""

    def __init__(self, cache: Any) -> None:
        self._cache = cache

    def _failed(self, action: str, exc: Exception) -> None:
        logger.warning(
            "session cache %s failed (%s: %s)", action, type(exc).__name__, exc
        )

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self._cache.get(key, default)
        except Exception as exc:
            self._failed("read", exc)
            return default

    def set(self, key: str, value: Any, timeout: Any = None) -> None:
        try:
            self._cache.set(key, value, timeout)
        except Exception as exc:
            self._failed("write", exc)

    def delete(self, key: str) -> None:
        try:
            self._cache.delete(key)
        except Exception as exc:
            self._failed("delete", exc)

    def __contains__(self, key: str) -> bool:
        try:
            return key in self._cache
        except Exception as exc:
            self._failed("lookup", exc)
            return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cache, name)

    def __str__(self) -> str:
        return str(self._cache)


class SessionStore(CachedDBStore):
    """``cached_db`` sessions that survive a failing cache."""

    def __init__(self, session_key: str | None = None) -> None:
        super().__init__(session_key)
        self._cache: Any = _CacheOrMiss(self._cache)
