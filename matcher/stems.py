"""A persistent stem table: each term is stemmed once per machine, not once per process.

NLTK's Porter stemmer costs about 13 µs a term and importing NLTK about a second, so a
fresh process (``python -m matcher score``, a new worker) spent most of its time on
them. The table keeps ``term -> stem`` pairs in SQLite, namespaced by the stemmer and
its exact NLTK version, so a stem is only ever computed by NLTK itself: the table is a
cache of NLTK's output, never a second stemmer. Processes load the table when they
first stem, compute only the terms it lacks (importing NLTK only then) and add them in
bulk; concurrent workers share one file (SQLite locking, write-ahead log).

``MATCHER_STEM_TABLE`` names the file (default
``$XDG_CACHE_HOME/nuggets-matcher/stems.sqlite3``, i.e. under ``~/.cache``); ``off``
disables it. The table is only a cache: any error opening, reading or writing it falls
back to stemming in memory, and deleting the file is always safe.
"""

from __future__ import annotations

import atexit
import os
import sqlite3
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

ENV = "MATCHER_STEM_TABLE"
# New stems are written once this many are pending (and at exit / on save()).
FLUSH_EVERY = 20_000
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS stems (stemmer TEXT NOT NULL, term TEXT NOT NULL, "
    "stem TEXT NOT NULL, PRIMARY KEY (stemmer, term)) WITHOUT ROWID"
)


def stem_table_path() -> Path | None:
    """The table's file from ``MATCHER_STEM_TABLE`` (None when ``off`` or empty)."""
    value = os.environ.get(ENV)
    if value is None:
        base = os.environ.get("XDG_CACHE_HOME")
        if not base:
            try:
                base = str(Path.home() / ".cache")
            except RuntimeError:  # no home directory (some service accounts)
                return None
        return Path(base) / "nuggets-matcher" / "stems.sqlite3"
    if value.strip().lower() in ("", "off", "0", "none"):
        return None
    return Path(value)


@lru_cache(maxsize=1)
def nltk_version() -> str:
    """The installed NLTK's version, without importing NLTK.

    NLTK reads its ``__version__`` from the ``VERSION`` file of its package; reading
    that file costs a millisecond where ``importlib.metadata`` costs some 50 ms of a
    cold start. The distribution metadata is the fallback when the file is missing.
    """
    import importlib.util

    spec = importlib.util.find_spec("nltk")
    if spec is not None and spec.origin:
        try:
            text = Path(spec.origin).with_name("VERSION").read_text(encoding="utf-8")
        except OSError:
            text = ""
        if text.strip():
            return text.strip()
    from importlib.metadata import version

    return version("nltk")


@lru_cache(maxsize=1)
def porter_stemmer_id() -> str:
    """The table's namespace for NLTK's Porter stemmer: mode and exact NLTK version."""
    return f"nltk-{nltk_version()}/porter/NLTK_EXTENSIONS"


def porter_stem_function() -> Callable[[str], str]:
    """NLTK's ``PorterStemmer().stem`` (default NLTK_EXTENSIONS mode), imported now."""
    from nltk.stem.porter import PorterStemmer

    stem: Callable[[str], str] = PorterStemmer().stem
    return stem


class StemTable:
    """The stems of one stemmer in the table file; every failure turns it off quietly."""

    def __init__(self, path: Path | None, stemmer: str) -> None:
        self.path = path
        self.stemmer = stemmer
        self._pending: list[tuple[str, str, str]] = []
        self._broken = path is None
        atexit.register(self.save)

    def _connect(self) -> sqlite3.Connection | None:
        if self._broken or self.path is None:
            return None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(self.path, timeout=10)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(_SCHEMA)
            return connection
        except (OSError, sqlite3.Error):
            self._broken = True
            return None

    def load(self) -> dict[str, str]:
        """Every ``term -> stem`` stored for this stemmer."""
        connection = self._connect()
        if connection is None:
            return {}
        try:
            with connection:
                rows = connection.execute(
                    "SELECT term, stem FROM stems WHERE stemmer = ?", (self.stemmer,)
                )
                return dict(rows)
        except sqlite3.Error:
            self._broken = True
            return {}
        finally:
            connection.close()

    def add(self, term: str, stem: str) -> None:
        """Remember a new stem; written with the next :meth:`save`."""
        if self._broken:
            return
        self._pending.append((self.stemmer, term, stem))
        if len(self._pending) >= FLUSH_EVERY:
            self.save()

    def save(self) -> None:
        """Write the pending stems in one transaction (terms already there are kept)."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        connection = self._connect()
        if connection is None:
            return
        try:
            with connection:
                connection.executemany(
                    "INSERT OR IGNORE INTO stems (stemmer, term, stem) VALUES (?, ?, ?)",
                    pending,
                )
        except sqlite3.Error:
            self._broken = True
        finally:
            connection.close()


@lru_cache(maxsize=1)
def porter_table() -> StemTable:
    """The process's table of NLTK Porter stems (the file of ``MATCHER_STEM_TABLE``)."""
    return StemTable(stem_table_path(), porter_stemmer_id())
