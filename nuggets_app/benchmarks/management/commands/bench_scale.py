"""``manage.py bench_scale --docs N --topics T --runs R --workers W [--json FILE]``:
the whole loop on a generated collection, at N/10 and then at N, on PostgreSQL and
Redis with W real Celery worker processes.

Each size gets its own collection of the demo generator's model
(:mod:`nuggets_app.benchmarks.scale_world`), imported from files, then: a depth-100
pool of the R runs, a statAP sample of a tenth of it, an assessor judging the sample,
a matching job with features over every document for every topic, the fit, the
inferred and probabilistic exports, ``evaluate --job`` of every run, and the job's
pages as a staff user (:mod:`nuggets_app.benchmarks.scale_stages`). It prints each
stage's rate at both sizes and their ratio, measured in the same run; at N/10 the job
runs again on W warm workers and on one, for the speed-up of W. Peak memory is sampled from ``/proc``
(this process and the workers' process trees). The generated collections are deleted
(``--keep`` keeps the larger one). Needs DATABASE_URL (PostgreSQL) and REDIS_URL, and
no other worker on the queue.
"""

from __future__ import annotations

import json
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from nuggets_app.benchmarks import scale_stages as stages
from nuggets_app.benchmarks.celery_processes import (
    celery_process,
    celery_stop,
    worker_args,
)
from nuggets_app.benchmarks.rss import PeakSampler
from nuggets_app.benchmarks.scale_world import scale_world_write


def database_url() -> str:
    """The URL of the database this process uses, for the workers it starts (under
    the test runner that is the test database, not DATABASE_URL's)."""
    db = settings.DATABASES["default"]
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


class Workers:
    """``celery -A nuggets_app worker`` processes of one concurrency each, as a
    deployment scales them (one per container or machine)."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.procs: list[Any] = []

    def pids(self) -> list[int]:
        return [p.pid for p in self.procs if p.poll() is None]

    def scale(self, count: int, timeout: float = 90) -> None:
        """Stop or start workers until ``count`` run, each ready to consume."""
        while len(self.procs) > count:
            celery_stop(self.procs.pop())
        started = []
        while len(self.procs) < count:
            log = self.log_dir / f"worker-{uuid.uuid4().hex[:6]}.log"
            name = f"bench-scale-{uuid.uuid4().hex[:6]}"
            env = {"DATABASE_URL": database_url()}
            proc = celery_process(worker_args(1, name), log, "INFO", env=env)
            self.procs.append(proc)
            started.append((proc, log))
        deadline = time.monotonic() + timeout
        for proc, log in started:
            while b" ready." not in log.read_bytes():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise CommandError(f"a worker did not start; see {log}")
                time.sleep(0.2)

    def stop(self) -> None:
        self.scale(0)


class Command(BaseCommand):
    help = (
        "Benchmark the whole loop (import to pages) at N/10 and N documents on "
        "PostgreSQL + Redis with real workers; rates, their ratio, peak memory."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--docs", type=int, default=100_000)
        parser.add_argument("--topics", type=int, default=50)
        parser.add_argument("--runs", type=int, default=40, help="runs of depth 1000")
        parser.add_argument("--workers", type=int, default=2)
        parser.add_argument("--json", metavar="FILE", help="write the figures as JSON")
        parser.add_argument(
            "--repeats",
            type=int,
            default=20,
            help="requests of each page for the p95 (20)",
        )
        parser.add_argument(
            "--keep", action="store_true", help="keep the collection of N documents"
        )

    def handle(self, *args, **options) -> None:
        engine = settings.DATABASES["default"]["ENGINE"]
        if not settings.REDIS_URL or "postgresql" not in engine:
            raise CommandError(
                "bench_scale needs DATABASE_URL (PostgreSQL) and REDIS_URL"
            )
        if options["docs"] < 10 or options["topics"] < 1 or options["runs"] < 1:
            raise CommandError("--docs must be at least 10, --topics and --runs 1")
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as folder:
            workers = Workers(Path(folder))
            try:
                self._say(f"starting {options['workers']} worker process(es)")
                workers.scale(options["workers"])
                with PeakSampler(workers.pids) as sampler:
                    result = self._both(options, workers, sampler, Path(folder))
            finally:
                workers.stop()
        result["total_seconds"] = time.perf_counter() - started
        self._table(result, options)
        if options["json"]:
            Path(options["json"]).write_text(json.dumps(result, indent=1) + "\n")
            self._say(f"wrote {options['json']}")

    def _both(self, options, workers: Workers, sampler, folder: Path) -> dict:
        tenth_docs = max(1, options["docs"] // 10)
        tenth, tenth_run = self._size(tenth_docs, options, sampler, folder)
        try:
            speedup = self._speedup(tenth_run, options, workers)
        finally:
            stages.scale_drop(tenth_run.name)
        full, full_run = self._size(options["docs"], options, sampler, folder)
        if not options["keep"]:
            stages.scale_drop(full_run.name)
        out: dict[str, Any] = {"stages": {}, "tenth": {}}
        for name, stage in full.items():
            before = tenth[name]
            out["stages"][name] = {
                "seconds": round(stage.seconds, 3),
                "rate": round(stage.rate, 2),
                "ratio_to_tenth": round(stage.rate / before.rate, 3)
                if before.rate
                else None,
                "peak_rss_mb": round(stage.peak_rss_mb, 1),
                "units": stage.units,
                "unit": stage.unit,
                **stage.detail,
            }
            out["tenth"][name] = {
                "seconds": round(before.seconds, 3),
                "rate": round(before.rate, 2),
                "units": before.units,
                "peak_rss_mb": round(before.peak_rss_mb, 1),
            }
        out["peak_rss_mb"] = round(
            max(s.peak_rss_mb for s in [*full.values(), *tenth.values()]), 1
        )
        out["pipeline_seconds"] = round(sum(s.seconds for s in full.values()), 3)
        for label, run in (("", full_run), ("_tenth", tenth_run)):
            every = [t for times in run.page_ms.values() for t in times]
            out[f"page_p95_ms{label}"] = round(stages.p95(every), 1)
            out[f"pages{label}"] = {
                kind: {
                    "p95_ms": round(stages.p95(times), 1),
                    "first_ms": round(run.page_first_ms[kind], 1),
                }
                for kind, times in run.page_ms.items()
            }
        out.update(speedup)
        out.update(docs=options["docs"], topics=options["topics"], runs=options["runs"])
        out["workers"] = options["workers"]
        return out

    def _size(self, docs: int, options, sampler, folder: Path):
        """Generate the collection of ``docs`` documents and run every stage on it."""
        name = f"bench-scale-{uuid.uuid4().hex[:6]}-{docs}"
        here = folder / str(docs)
        here.mkdir()
        self._say(f"{docs:,} documents: generating the collection")
        world = scale_world_write(
            here, docs=docs, topics=options["topics"], runs=options["runs"]
        )
        run = stages.ScaleRun(world=world, name=name)
        steps = [
            lambda: stages.stage_import(run),
            lambda: stages.stage_import_runs(run),
            lambda: stages.stage_pool(run),
            lambda: stages.stage_sample(run),
            lambda: stages.stage_judging(run),
            lambda: stages.stage_match(run, self._say),
            lambda: stages.stage_fit(run),
            lambda: stages.stage_export(run, "inferred", here),
            lambda: stages.stage_export(run, "probabilistic", here),
            lambda: stages.stage_evaluate(run),
            lambda: stages.stage_pages(run, options["repeats"]),
        ]
        results = {}
        sampler.lap()
        try:
            for step in steps:
                stage = step()
                own, workers = sampler.lap()
                stage.peak_rss_mb = own + workers
                stage.detail = {
                    "command_rss_mb": round(own, 1),
                    "workers_rss_mb": round(workers, 1),
                    "database_mb": round(stages.database_mb(), 1),
                }
                results[stage.name] = stage
                self._say(
                    f"  {docs:,} {stage.name}: {stage.units:,} {stage.unit} in "
                    f"{stage.seconds:.1f}s = {stage.rate:,.0f}/s, peak "
                    f"{stage.peak_rss_mb:,.0f} MB"
                )
        except BaseException:
            stages.scale_drop(name)
            raise
        return results, run

    def _speedup(self, run, options, workers: Workers) -> dict:
        """The job again at N/10, on W warm workers and then on one: the speed-up
        of W (the pipeline's own job also paid the workers' start)."""
        if options["workers"] < 2:
            return {"workers_speedup": 1.0, "workers_speedup_at": "tenth"}
        rates = {}
        try:
            for count in (options["workers"], 1):
                workers.scale(count)
                started = time.perf_counter()
                job = stages.match_job(run, self._say)
                rates[count] = job.docs_total / (time.perf_counter() - started)
        finally:
            workers.scale(options["workers"])
        many, one = rates[options["workers"]], rates[1]
        self._say(
            f"  matching at N/10 again: on {options['workers']} workers {many:,.0f}/s, "
            f"on 1 {one:,.0f}/s = {many / one:.2f}x"
        )
        return {
            "workers_speedup": round(many / one, 3),
            "workers_speedup_at": "tenth",
            "match_rate_workers": round(many, 2),
            "match_rate_one_worker": round(one, 2),
        }

    def _table(self, result: dict, options) -> None:
        small = f"rate at {max(1, options['docs'] // 10):,}"
        large = f"rate at {options['docs']:,}"
        self.stdout.write(
            f"{'stage':<22} {'unit':<22} {small:>16} {large:>16} {'ratio':>6} "
            f"{'peak MB':>8}"
        )
        for name, row in result["stages"].items():
            self.stdout.write(
                f"{name:<22} {row['unit']:<22} {result['tenth'][name]['rate']:>16,.1f} "
                f"{row['rate']:>16,.1f} {row['ratio_to_tenth'] or 0:>6.2f} "
                f"{row['peak_rss_mb']:>8,.0f}"
            )
        self.stdout.write(
            f"total {result['total_seconds']:.1f}s (pipeline at N "
            f"{result['pipeline_seconds']:.1f}s); peak memory "
            f"{result['peak_rss_mb']:,.0f} MB; pages p95 {result['page_p95_ms']:.1f} ms; "
            f"workers speed-up {result['workers_speedup']:.2f}x (at N/10)"
        )

        for kind, page in result["pages"].items():
            self.stdout.write(
                f"  {kind} page: p95 {page['p95_ms']:.1f} ms, first request "
                f"{page['first_ms']:.1f} ms"
            )

    def _say(self, line: str) -> None:
        self.stdout.write(line)
        self.stdout.flush()
