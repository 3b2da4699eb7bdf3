"""``manage.py bench_import [--docs N [N ...]]``: document import throughput into the database.

Generates a TREC SGML collection of N documents (seeded, about 150 words each) in a
temporary file, measures plain parsing of that file (the baseline: no database), then
the full import into the configured database, and prints documents per second for both
and their ratio. With several sizes (``--docs 100000 1000000``) it measures each in
turn and prints each import rate as a share of the first size's, so that scaling is
judged within one run on a shared machine. Run it with DATABASE_URL pointing at
PostgreSQL for the README figure.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser
from django.db import connection, transaction

from nuggets_app.collection.services.imports import collection_import
from nuggets_app.importers import parse_collection
from nuggets_app.models import Collection, Document

BENCH_NAME = "bench-import"


def write_collection(path: Path, docs: int, seed: int = 13) -> int:
    """Write ``docs`` synthetic documents as TREC SGML; returns the file size in bytes."""
    rng = random.Random(seed)
    vocabulary = [
        "".join(
            rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 11))
        )
        for _ in range(20_000)
    ]
    with path.open("w", encoding="utf-8") as handle:
        for number in range(docs):
            title = " ".join(rng.choices(vocabulary, k=8))
            words = rng.choices(vocabulary, k=rng.randint(50, 250))
            body = "\n".join(
                " ".join(words[i : i + 15]) for i in range(0, len(words), 15)
            )
            handle.write(
                f"<DOC>\n<DOCNO>BENCH-{number:07d}</DOCNO>\n<TITLE>{title}</TITLE>\n"
                f"<TEXT>\n{body}\n</TEXT>\n</DOC>\n"
            )
    return path.stat().st_size


def _drop_bench_collection() -> None:
    collection = Collection.objects.filter(name=BENCH_NAME).first()
    if collection is None:
        return
    table = connection.ops.quote_name(Document._meta.db_table)
    with transaction.atomic(), connection.cursor() as cursor:
        # Plain SQL: the ORM's cascade would load every generated document first.
        cursor.execute(f"DELETE FROM {table} WHERE collection_id = %s", [collection.pk])
        collection.delete()


class Command(BaseCommand):
    help = "Benchmark document import (documents/s) against plain parsing of the same file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--docs",
            type=int,
            nargs="+",
            default=[100_000],
            help="documents to generate; several sizes are measured in turn",
        )
        parser.add_argument(
            "--keep", action="store_true", help=f"keep the {BENCH_NAME!r} collection"
        )

    def handle(self, *args, **options) -> None:
        self.stdout.write(f"database: {connection.vendor}")
        rates = []
        for docs in options["docs"]:
            rates.append(self._measure(docs, keep=options["keep"]))
        for docs, rate in zip(options["docs"][1:], rates[1:], strict=True):
            self.stdout.write(
                f"import rate at {docs:,} over the rate at {options['docs'][0]:,}: "
                f"{rate / rates[0]:.2f}"
            )

    def _measure(self, docs: int, *, keep: bool) -> float:
        """Generate, parse and import ``docs`` documents; returns the import rate."""
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "bench.trec"
            size = write_collection(path, docs)
            self.stdout.write(f"generated {docs} documents, {size / 1e6:.1f} MB")

            started = time.perf_counter()
            parsed = sum(1 for _ in parse_collection(path))
            parse_seconds = time.perf_counter() - started

            _drop_bench_collection()
            started = time.perf_counter()
            summary = collection_import(path=path, name=BENCH_NAME)
            import_seconds = time.perf_counter() - started
        if not keep:
            _drop_bench_collection()

        baseline = parsed / parse_seconds
        rate = summary.records / import_seconds
        self.stdout.write(
            f"baseline (parse only, no database): {baseline:,.0f} documents/s"
        )
        self.stdout.write(f"import into the database: {rate:,.0f} documents/s")
        self.stdout.write(f"ratio import/baseline: {rate / baseline:.2f}")
        return rate
