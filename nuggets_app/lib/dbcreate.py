"""Create the PostgreSQL database named in a DATABASE_URL if it does not exist yet."""

import dj_database_url
import psycopg2
from psycopg2 import sql


def ensure_database(url: str) -> None:
    cfg = dj_database_url.parse(url)
    if "postgresql" not in cfg["ENGINE"]:
        return
    conn = psycopg2.connect(
        dbname="postgres",
        user=cfg.get("USER") or None,
        password=cfg.get("PASSWORD") or None,
        host=cfg.get("HOST") or None,
        port=cfg.get("PORT") or None,
    )
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", [cfg["NAME"]])
        if cur.fetchone() is None:
            cur.execute(
                sql.SQL("CREATE DATABASE {}").format(sql.Identifier(cfg["NAME"]))
            )
    conn.close()
