"""``manage.py bench_sampling``: time statAP sampling of a 50-topic, 100-run, depth-100 pool.

The pool is generated in memory (each run ranks a topic's documents by a shared latent
quality plus run-specific noise, so runs overlap at the top and differ below, as real
runs do). Timed in the same process: the baseline computes ``p(d)`` for every topic;
the sampler computes ``p(d)`` and draws the sample. ``--db`` also times ``pool_build``
and ``sample_draw`` on the configured database, inside a transaction that is rolled
back.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import numpy as np
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from nuggets_app.ir.sampling import draw_per_run_quota, draw_statap, pool_distribution

Rankings = dict[str, dict[str, list[str]]]


class _Rollback(Exception):
    """Raised to undo the database benchmark's writes."""


def synthetic_pool(
    *, topics: int, runs: int, depth: int, documents: int, seed: int
) -> Rankings:
    """qid -> run -> docnos best first: noisy rankings of a shared latent quality."""
    rng = np.random.default_rng(seed)
    noise = rng.uniform(0.2, 3.0, size=runs)  # good runs and bad runs
    pool: Rankings = {}
    for qid in range(1, topics + 1):
        quality = rng.exponential(size=documents)
        scores = quality + rng.normal(size=(runs, documents)) * noise[:, None]
        top = np.argsort(-scores, axis=1)[:, :depth]
        pool[str(qid)] = {
            f"run{r:03d}": [f"D{d:05d}" for d in top[r]] for r in range(runs)
        }
    return pool


def timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


class Command(BaseCommand):
    help = "Benchmark statAP sampling of a generated 50-topic, 100-run, depth-100 pool."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--topics", type=int, default=50)
        parser.add_argument("--runs", type=int, default=100)
        parser.add_argument("--depth", type=int, default=100)
        parser.add_argument(
            "--documents", type=int, default=5000, help="documents per topic to rank"
        )
        parser.add_argument(
            "--size", type=int, default=100, help="sample size per topic"
        )
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument(
            "--db", action="store_true", help="also time the services on the database"
        )

    def handle(self, *args, **options) -> None:
        pool = synthetic_pool(
            topics=options["topics"],
            runs=options["runs"],
            depth=options["depth"],
            documents=options["documents"],
            seed=options["seed"],
        )
        sizes = [len({d for r in runs.values() for d in r}) for runs in pool.values()]
        self.stdout.write(
            f"pool: {len(pool)} topics, {options['runs']} runs, depth {options['depth']}, "
            f"{sum(sizes)} documents ({sum(sizes) / len(sizes):.0f} per topic)"
        )
        size, seed = options["size"], options["seed"]
        baseline = timed(lambda: [pool_distribution(runs) for runs in pool.values()])
        statap = timed(
            lambda: [
                draw_statap(
                    pool_distribution(runs), size, random.Random(f"{seed}:{qid}")
                )
                for qid, runs in pool.items()
            ]
        )
        quota = timed(
            lambda: [
                draw_per_run_quota(runs, size, random.Random(f"{seed}:{qid}"))
                for qid, runs in pool.items()
            ]
        )
        self._line("baseline, p(d) only", baseline, len(pool), baseline)
        self._line(f"statAP sample, n={size}", statap, len(pool), baseline)
        self._line(f"per-run quota, n={size}", quota, len(pool), baseline)
        if options["db"]:
            self._bench_db(pool, options, baseline)

    def _line(self, label: str, seconds: float, topics: int, baseline: float) -> None:
        self.stdout.write(
            f"{label:<26} {seconds:8.3f} s  {topics / seconds:8.1f} topics/s  "
            f"{seconds / baseline:6.2f} x baseline"
        )

    def _bench_db(self, pool: Rankings, options: dict, baseline: float) -> None:
        from nuggets_app.pooling.services.pools import pool_build
        from nuggets_app.pooling.services.samples import sample_draw

        try:
            with transaction.atomic():
                collection, runs, load = _load_pool(pool)
                self.stdout.write(f"database: {load:.1f} s to insert the run entries")
                built = timed(
                    lambda: pool_build(
                        collection=collection,
                        runs=runs,
                        depth=options["depth"],
                        name="b",
                    )
                )
                self._line("database pool_build", built, len(pool), baseline)
                drawn = timed(
                    lambda: sample_draw(
                        pool=collection.pools.get(name="b"),
                        size=options["size"],
                        method="statap",
                        seed=options["seed"],
                        name="b",
                    )
                )
                self._line("database sample_draw", drawn, len(pool), baseline)
                raise _Rollback
        except _Rollback:
            self.stdout.write("database: rolled back, nothing kept")


def _load_pool(pool: Rankings):
    from nuggets_app.models import Collection, Document, Run, RunEntry, Topic
    from nuggets_app.operations.bulk import insert_rows

    started = time.perf_counter()
    collection = Collection.objects.create(name="bench-sampling")
    docnos = sorted({d for runs in pool.values() for r in runs.values() for d in r})
    Document.objects.bulk_create(
        (Document(collection=collection, docno=d) for d in docnos), batch_size=5000
    )
    documents = dict(collection.documents.values_list("docno", "pk"))
    topics = {qid: Topic.objects.create(collection=collection, qid=qid) for qid in pool}
    names = sorted({name for runs in pool.values() for name in runs})
    runs = {
        name: Run.objects.create(collection=collection, name=name) for name in names
    }
    insert_rows(
        RunEntry,
        ["run", "topic", "document", "rank", "score"],
        (
            (runs[name].pk, topics[qid].pk, documents[docno], rank, float(-rank))
            for qid, per_run in pool.items()
            for name, ranking in per_run.items()
            for rank, docno in enumerate(ranking, start=1)
        ),
    )
    return collection, list(runs.values()), time.perf_counter() - started
