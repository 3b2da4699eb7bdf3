"""What the releases tests share beside their fixture."""

from __future__ import annotations

import io

from django.core.management import call_command
from django.db import connection


def database_empty() -> None:
    """Every table emptied, as a new installation's database: the test's own
    transaction first checks the constraints it deferred, then TRUNCATE runs."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    call_command("flush", "--no-input", stdout=io.StringIO())
