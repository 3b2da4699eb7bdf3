"""Shared pieces of the matching services: states, errors, database connections."""

from __future__ import annotations

import contextlib
import logging

from django.db import DatabaseError, InterfaceError, OperationalError, connection

from nuggets_app.errors import DomainError
from nuggets_app.models import (
    MatchChunk,
    MatchJob,
)

logger = logging.getLogger("nuggets_app.inference.services.matching")

Status = MatchJob.Status
ChunkStatus = MatchChunk.Status
ACTIVE = (Status.PENDING, Status.RUNNING)
RESULT_BATCH = 1000
HEARTBEAT_SECONDS = 1.0
# Namespace of the advisory locks (two-int form), so chunk ids never collide with
# locks other code takes on the same database.
LOCK_CLASS = 0x4E55


class MatchJobError(DomainError):
    """A job cannot be launched or changed as asked; the message says why."""


class TransientChunkError(Exception):
    """A chunk failed for a reason that may go away (database or broker hiccup)."""


class ChunkCancelled(Exception):
    """The job was cancelled while the chunk ran."""


# InterfaceError is not a DatabaseError in Django: it is what a query on a connection
# the server has closed raises ("connection already closed").
TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    TransientChunkError,
    DatabaseError,
    InterfaceError,
    ConnectionError,
    TimeoutError,
)


def db_connection_reset() -> bool:
    """After a database error: if this process's connection is gone (server restart,
    failover, terminated backend, network), close it so the next query opens a new one,
    and say so. A connection that still answers is left alone (False)."""
    if connection.connection is None:
        return True  # Django already dropped it after the failure
    if connection.is_usable():
        return False
    with contextlib.suppress(DatabaseError, InterfaceError):
        connection.close()
    return True


# SQLSTATE classes of a lost connection: 08 (connection exception), 57P01-57P03
# (administrator or crash shutdown, server starting up).
_LOST_SQLSTATES = ("08", "57P01", "57P02", "57P03")


def db_connection_lost(exc: BaseException) -> bool:
    """Whether ``exc`` says the database connection itself went away, rather than a
    query failing on a working connection (a deadlock or a lock timeout counts as a
    failed attempt; a lost connection does not)."""
    if isinstance(exc, InterfaceError):
        return True  # "connection already closed"
    if not isinstance(exc, OperationalError):
        return False
    cause = exc.__cause__
    if cause is None or not hasattr(cause, "pgcode"):
        return False
    code = cause.pgcode or ""  # none: the client saw the socket close
    return not code or code.startswith(_LOST_SQLSTATES)
