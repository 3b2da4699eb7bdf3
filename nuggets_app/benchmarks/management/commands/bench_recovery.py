"""``manage.py bench_recovery``: how long a matching job takes to recover from faults,
with the deployment's own settings (``MATCH_ORPHAN_SECONDS``,
``MATCH_SUPERVISE_SECONDS``, ``MATCH_CHUNK_STALE_SECONDS``, ...).

Generates a pool (as ``bench_match`` does), starts a Celery worker and one Celery beat
as subprocesses, and runs the same job once undisturbed (the baseline), then once per
fault, injected when about ``--kill-at`` of the chunks are done:

- ``worker``: SIGKILL of the whole worker (main process and pool), and a replacement
  worker started at once, as a process manager would;
- ``child``: SIGKILL of one pool process;
- ``db``: ``pg_terminate_backend`` on every other connection to the database.

For each run it prints the job's wall time, the delay against the baseline, the
longest stall (time without a finished chunk after the first), and checks that the job ends done with
exactly one result per pooled document. Needs DATABASE_URL and REDIS_URL, and no other
worker or beat on the queue. The generated collection is deleted unless ``--keep``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from nuggets_app.benchmarks.celery_processes import (
    celery_process,
    celery_stop,
    worker_args,
)
from nuggets_app.benchmarks.management.commands.bench_match import Command as MatchBench
from nuggets_app.inference.services.matching import match_job_launch
from nuggets_app.models import MatchJob, MatchResult, PoolDocument

FAULTS = ("worker", "child", "db")


class Command(BaseCommand):
    help = "Measure a matching job's recovery time after SIGKILLs and database drops."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--topics", type=int, default=10)
        parser.add_argument("--docs", type=int, default=30_000, help="documents")
        parser.add_argument("--nuggets", type=int, default=40, help="per topic")
        parser.add_argument("--words", type=int, default=150, help="per document")
        parser.add_argument("--concurrency", type=int, default=2)
        parser.add_argument(
            "--kill-at", type=float, default=0.3, help="fraction of chunks done"
        )
        parser.add_argument(
            "--faults",
            default=",".join(FAULTS),
            help="comma separated: worker,child,db",
        )
        parser.add_argument("--seed", type=int, default=42)
        parser.add_argument("--keep", action="store_true")

    def handle(self, *args, **options) -> None:
        if not settings.REDIS_URL or connection.vendor != "postgresql":
            raise CommandError(
                "bench_recovery needs DATABASE_URL (PostgreSQL) and REDIS_URL"
            )
        faults = [f for f in options["faults"].split(",") if f]
        unknown = set(faults) - set(FAULTS)
        if unknown:
            raise CommandError(f"unknown fault(s) {sorted(unknown)}: {FAULTS}")
        busy = list(
            MatchJob.objects.filter(status__in=["pending", "running"]).values_list(
                "pk", flat=True
            )
        )
        if busy:
            raise CommandError(
                f"jobs {busy} are still active on this database: their chunks would "
                "share the worker and skew the figures (cancel them first)"
            )
        self.options = options
        self.stdout.write(
            "settings: "
            f"MATCH_CHUNK_SIZE={settings.MATCH_CHUNK_SIZE} "
            f"MATCH_ORPHAN_SECONDS={settings.MATCH_ORPHAN_SECONDS} "
            f"MATCH_SUPERVISE_SECONDS="
            f"{settings.CELERY_BEAT_SCHEDULE['match-supervise']['schedule']} "
            f"MATCH_CHUNK_STALE_SECONDS={settings.MATCH_CHUNK_STALE_SECONDS} "
            f"CELERY_VISIBILITY_TIMEOUT={settings.CELERY_VISIBILITY_TIMEOUT}"
        )
        from nuggets_app.celery import app

        with app.connection_for_write() as conn:
            conn.default_channel.queue_purge(settings.CELERY_TASK_DEFAULT_QUEUE)
        bench = MatchBench(stdout=self.stdout, stderr=self.stderr)
        collection, topics, pool = bench._generate(options)
        self.expected = PoolDocument.objects.filter(pool=pool).count()
        self.launch = lambda: match_job_launch(
            collection=collection, topics=topics, source="pool", pool=pool
        )
        logs = Path(settings.DATA_DIR) / "bench-recovery"
        logs.mkdir(exist_ok=True)
        schedule = str(logs / "beat-schedule")
        beat = celery_process(["beat", "-s", schedule], logs / "beat.log")
        try:
            base = self._run(None, logs)
            self.stdout.write(
                f"baseline (no fault): {self.expected} documents, "
                f"{base['chunks']} chunks in {base['seconds']:.1f}s; "
                f"longest stall between chunks {base['gap']:.1f}s"
            )
            for fault in faults:
                got = self._run(fault, logs)
                self.stdout.write(
                    f"{fault:>6} killed at {got['killed_at']:.1f}s: job done in "
                    f"{got['seconds']:.1f}s = baseline + {got['seconds'] - base['seconds']:.1f}s "
                    f"({got['seconds'] / base['seconds']:.2f}x); longest gap between "
                    f"chunks {got['gap']:.1f}s; results exact: {got['exact']}"
                    + (
                        f"; the replacement worker was ready {got['ready']:.1f}s "
                        "after the kill"
                        if fault == "worker"
                        else ""
                    )
                )
        finally:
            celery_stop(beat)
            if not options["keep"]:
                bench._delete(collection)

    def _run(self, fault: str | None, logs: Path) -> dict:
        worker = _start_worker(self.options["concurrency"], logs)
        killed_at = 0.0
        self.replacement_ready = 0.0
        try:
            started = time.perf_counter()
            job = self.launch()
            last_done, last_change, gap = 0, 0.0, 0.0
            while True:
                job.refresh_from_db()
                now = time.perf_counter()
                if job.chunks_done != last_done:
                    if last_done:  # from the first finished chunk on
                        gap = max(gap, now - last_change)
                    last_done, last_change = job.chunks_done, now
                if job.status in ("done", "failed", "cancelled"):
                    break
                if (
                    fault
                    and not killed_at
                    and (job.chunks_done >= self.options["kill_at"] * job.chunks_total)
                ):
                    killed_at = now - started
                    worker = self._inject(fault, worker, logs)
                if now - started > 1800:
                    raise CommandError(f"job {job.pk} not done after 30 minutes")
                time.sleep(0.1)
            seconds = time.perf_counter() - started
        finally:
            celery_stop(worker)
        if job.status != MatchJob.Status.DONE:
            raise CommandError(f"job {job.pk} {job.status}: {job.error}")
        rows = MatchResult.objects.filter(job=job)
        exact = (
            rows.count() == self.expected
            and rows.values("topic", "document").distinct().count() == self.expected
        )
        result = {"seconds": seconds, "gap": gap, "killed_at": killed_at}
        result.update(chunks=job.chunks_total, exact=exact)
        result["ready"] = self.replacement_ready
        job.delete()
        return result

    def _inject(self, fault: str, worker: subprocess.Popen, logs: Path):
        if fault == "worker":
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(10)
            killed = time.perf_counter()
            worker = _start_worker(self.options["concurrency"], logs, wait=False)
            self.replacement_ready = _ready_after(worker, killed)
            return worker
        if fault == "child":
            children = Path(f"/proc/{worker.pid}/task/{worker.pid}/children")
            pids = [int(p) for p in children.read_text().split()]
            if pids:
                os.kill(pids[0], signal.SIGKILL)
            return worker
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        return worker


def _start_worker(concurrency: int, logs: Path, wait: bool = True) -> subprocess.Popen:
    """A worker subprocess; with ``wait``, returns once it consumes."""
    tag = uuid.uuid4().hex[:6]
    log = logs / f"worker-{tag}.log"
    proc = celery_process(worker_args(concurrency, f"recovery-{tag}"), log)
    proc.log = log  # type: ignore[attr-defined]
    deadline = time.monotonic() + 120
    while wait and b" ready." not in log.read_bytes():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise CommandError(f"the worker did not start; see {log}")
        time.sleep(0.2)
    return proc


def _ready_after(proc: subprocess.Popen, since: float) -> float:
    """Seconds from ``since`` until the worker logged that it is ready."""
    while b" ready." not in proc.log.read_bytes():  # type: ignore[attr-defined]
        if proc.poll() is not None:
            raise CommandError("the replacement worker exited")
        time.sleep(0.1)
    return time.perf_counter() - since
