"""Is the deployment working: the database, the task broker, the workers."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connection

OK = "ok"
IN_PROCESS = "none (tasks run in-process)"
BROKER_TIMEOUT = 3.0
PING_TIMEOUT = 0.5


class BrokerUnavailable(Exception):
    """The task broker does not answer; the message says where and why."""


def database_check() -> str:
    """'' when the database answers a query, else what went wrong (any error: a
    health check reports, it never raises)."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return _describe(exc)
    return ""


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip()}"


def _broker_connection() -> Any:
    """A new connection to the broker with short timeouts, never one of the app's
    pooled connections: a broker restart leaves those closed, and the first read on
    one raised ``ConnectionError`` (``/healthz`` answered 500 once)."""
    from nuggets_app.celery import app

    return app.connection_for_write(
        connect_timeout=BROKER_TIMEOUT,
        transport_options={
            "socket_timeout": BROKER_TIMEOUT,
            "socket_connect_timeout": BROKER_TIMEOUT,
            "max_retries": 0,
        },
    )


def _broker_where(conn: Any) -> str:
    """The broker's address without its password (kombu masks even an absent one)."""
    if conn is None:
        return "(address unknown)"
    try:
        return conn.as_uri(include_password=not conn.password)
    except Exception:
        return "(address unknown)"


def _broker_ask(conn: Any) -> None:
    """Connect and make one round trip (a Redis PING where the transport has one)."""
    conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0)
    client = getattr(conn.default_channel, "client", None)
    if client is not None:
        client.ping()


def broker_check() -> None:
    """Raise :class:`BrokerUnavailable` unless the broker answers within a few
    seconds. With no ``REDIS_URL`` tasks run in-process and there is nothing to ask."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return
    conn = None
    try:
        conn = _broker_connection()
        with conn:
            _broker_ask(conn)
    except Exception as exc:  # kombu and redis raise many kinds
        raise BrokerUnavailable(
            f"the task broker at {_broker_where(conn)} is unreachable "
            f"({_describe(exc)})"
        ) from exc


def workers_ping(conn: Any | None = None) -> list[str]:
    """Names of the Celery workers that answer a ping within half a second, asked
    over ``conn`` (default: a new connection, closed afterwards)."""
    from nuggets_app.celery import app

    if conn is None:
        with _broker_connection() as fresh:
            return workers_ping(fresh)
    replies = app.control.ping(timeout=PING_TIMEOUT, connection=conn) or []
    return sorted(name for reply in replies for name in reply)


def _broker_and_workers() -> tuple[str, list[str] | None]:
    """(the broker's state, the workers that answered or None), over one new
    connection; any error is the broker's, with its message."""
    conn = None
    step = "is unreachable"
    try:
        conn = _broker_connection()
        with conn:
            _broker_ask(conn)
            step = "failed the workers' ping"
            return OK, workers_ping(conn)
    except Exception as exc:  # kombu and redis raise many kinds
        return (
            f"the task broker at {_broker_where(conn)} {step} ({_describe(exc)})",
            None,
        )


def health_report() -> dict[str, Any]:
    """What ``/healthz`` answers: each part's state, and ``ok`` when the database and
    the broker both work (workers are reported, not required: a deployment may scale
    them to zero between jobs). Never raises: an error of a part is that part's state
    (its message), and ``ok`` is false."""
    report: dict[str, Any] = {"database": OK, "broker": OK, "workers": None}
    problem = database_check()
    if problem:
        report["database"] = problem
    if settings.CELERY_TASK_ALWAYS_EAGER:
        report["broker"] = IN_PROCESS
    else:
        report["broker"], report["workers"] = _broker_and_workers()
    report["ok"] = report["database"] == OK and report["broker"] in (OK, IN_PROCESS)
    return report


def health_public(report: dict[str, Any]) -> dict[str, Any]:
    """The report without error texts or worker names (for anonymous callers)."""

    def state(value: str) -> str:
        return value if value in (OK, IN_PROCESS) else "error"

    workers = report["workers"]
    return {
        "ok": report["ok"],
        "database": state(report["database"]),
        "broker": state(report["broker"]),
        "workers": None if workers is None else len(workers),
    }
