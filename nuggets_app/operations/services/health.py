"""Is the deployment working: the database, the task broker, the workers."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import DatabaseError, InterfaceError, connection

OK = "ok"
IN_PROCESS = "none (tasks run in-process)"
BROKER_TIMEOUT = 3.0
PING_TIMEOUT = 0.5


class BrokerUnavailable(Exception):
    """The task broker does not answer; the message says where and why."""


def database_check() -> str:
    """'' when the database answers a query, else what went wrong."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except (DatabaseError, InterfaceError) as exc:
        return f"{type(exc).__name__}: {str(exc).strip()}"
    return ""


def broker_check() -> None:
    """Raise :class:`BrokerUnavailable` unless the broker answers within a few
    seconds. With no ``REDIS_URL`` tasks run in-process and there is nothing to ask."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return
    from nuggets_app.celery import app

    conn = app.connection_for_write(
        connect_timeout=BROKER_TIMEOUT,
        transport_options={
            "socket_timeout": BROKER_TIMEOUT,
            "socket_connect_timeout": BROKER_TIMEOUT,
            "max_retries": 0,
        },
    )
    try:
        with conn:
            conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0)
            client = getattr(conn.default_channel, "client", None)
            if client is not None:
                client.ping()
    except Exception as exc:  # kombu and redis raise many kinds
        # The address without its password (kombu masks even an absent one).
        where = conn.as_uri(include_password=not conn.password)
        raise BrokerUnavailable(
            f"the task broker at {where} is unreachable "
            f"({type(exc).__name__}: {str(exc).strip()})"
        ) from exc


def workers_ping() -> list[str]:
    """Names of the Celery workers that answer a ping within half a second."""
    from nuggets_app.celery import app

    replies = app.control.ping(timeout=PING_TIMEOUT) or []
    return sorted(name for reply in replies for name in reply)


def health_report() -> dict[str, Any]:
    """What ``/healthz`` answers: each part's state, and ``ok`` when the database and
    the broker both work (workers are reported, not required: a deployment may scale
    them to zero between jobs)."""
    report: dict[str, Any] = {"database": OK, "broker": OK, "workers": None}
    ok = True
    problem = database_check()
    if problem:
        report["database"] = problem
        ok = False
    if settings.CELERY_TASK_ALWAYS_EAGER:
        report["broker"] = IN_PROCESS
    else:
        try:
            broker_check()
        except BrokerUnavailable as exc:
            report["broker"] = str(exc)
            ok = False
        else:
            report["workers"] = workers_ping()
    report["ok"] = ok
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
