"""Fast bulk inserts for the loaders: plain tuples, no model instances.

Building a model instance per row and compiling Django's INSERT costs more than the
database work for imports of many small rows (run entries, judgments, documents), so the
loaders hand tuples to ``execute_values`` (PostgreSQL) or ``executemany`` (SQLite) inside
the caller's transaction; plain inserts on PostgreSQL go through ``COPY``.
``ON CONFLICT ... DO UPDATE`` makes document imports upserts.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

from django.db import connection
from django.db.models import Model


def _columns(model: type[Model], fields: Sequence[str]) -> list[str]:
    quote = connection.ops.quote_name
    return [quote(model._meta.get_field(name).column) for name in fields]  # type: ignore[union-attr,arg-type]


def insert_sql(
    model: type[Model],
    fields: Sequence[str],
    *,
    conflict: Sequence[str] = (),
    update: Sequence[str] = (),
    values: str,
) -> str:
    """``INSERT INTO table (cols) VALUES <values> [ON CONFLICT (..) DO UPDATE SET ..]``."""
    table = connection.ops.quote_name(model._meta.db_table)
    sql = f"INSERT INTO {table} ({', '.join(_columns(model, fields))}) VALUES {values}"
    if conflict:
        targets = ", ".join(_columns(model, conflict))
        sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in _columns(model, update))
        sql += f" ON CONFLICT ({targets}) DO UPDATE SET {sets}"
    return sql


def insert_rows(
    model: type[Model],
    fields: Sequence[str],
    rows: Iterable[tuple],
    *,
    conflict: Sequence[str] = (),
    update: Sequence[str] = (),
    page_size: int = 2000,
) -> None:
    """Insert ``rows`` (tuples in ``fields`` order); upsert when ``conflict`` is given."""
    rows = list(rows)
    if not rows:
        return
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql" and not conflict:
            table = connection.ops.quote_name(model._meta.db_table)
            columns = ", ".join(_columns(model, fields))
            cursor.cursor.copy_expert(
                f"COPY {table} ({columns}) FROM STDIN", io.StringIO(_copy_text(rows))
            )
        elif connection.vendor == "postgresql":
            from psycopg2.extras import execute_values

            sql = insert_sql(
                model, fields, conflict=conflict, update=update, values="%s"
            )
            execute_values(cursor.cursor, sql, rows, page_size=page_size)
        else:
            marks = "(" + ", ".join(["%s"] * len(fields)) + ")"
            sql = insert_sql(
                model, fields, conflict=conflict, update=update, values=marks
            )
            cursor.executemany(sql, rows)


def _copy_value(value: object) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return (
            value.replace("\\", "\\\\")
            .replace("\t", "\\t")
            .replace("\n", "\\n")
            .replace("\r", "\\r")
        )
    return str(value)


def _copy_text(rows: list[tuple]) -> str:
    """Rows in PostgreSQL's COPY text format (tab separated, ``\\N`` for NULL)."""
    return "".join("\t".join(map(_copy_value, row)) + "\n" for row in rows)
