"""The stages of the scale benchmark, each through the product's own services,
commands and pages, as a user drives them: import, pool, sample, judging, a matching
job on real workers, the fit, the exports, ``evaluate --job`` and the job's pages."""

from __future__ import annotations

import io
import math
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection, transaction
from django.test import Client, override_settings
from django.urls import reverse

from nuggets_app.benchmarks.scale_world import ScaleWorld
from nuggets_app.collection.services.imports import (
    collection_import,
    runs_import,
    topics_import,
)
from nuggets_app.collection.services.nugget_banks import nugget_bank_import
from nuggets_app.inference.services.export_kinds import ExportRequest, export_make
from nuggets_app.inference.services.job_model import job_model_fit
from nuggets_app.inference.services.matching import match_job_launch
from nuggets_app.judging.services.judgments import judgment_record
from nuggets_app.models import (
    Collection,
    Document,
    MatchJob,
    Nugget,
    Pool,
    Run,
    Sample,
    SampleDocument,
)
from nuggets_app.pooling.services.assignments import assignment_create
from nuggets_app.pooling.services.pools import pool_build
from nuggets_app.pooling.services.samples import sample_draw

POOL_DEPTH = 100
SAMPLE_SHARE = 0.1
# Enough judged documents for a fit in the smallest collections (a test's).
SAMPLE_MIN = 8


@dataclass
class Stage:
    """One stage's figures: ``units`` done in ``seconds``."""

    name: str
    seconds: float
    units: int
    unit: str
    peak_rss_mb: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.units / self.seconds if self.seconds > 0 else 0.0


@dataclass
class ScaleRun:
    """What the pipeline made at one size (the later stages read it)."""

    world: ScaleWorld
    name: str
    made: dict[str, Any] = field(default_factory=dict)  # by the stages, by name
    page_ms: dict[str, list[float]] = field(default_factory=dict)  # by page kind
    page_first_ms: dict[str, float] = field(default_factory=dict)

    def _made(self, name: str) -> Any:
        if name not in self.made:
            raise RuntimeError(f"no {name} yet: an earlier stage makes it")
        return self.made[name]

    @property
    def collection(self) -> Collection:
        return self._made("collection")

    @property
    def pool(self) -> Pool:
        return self._made("pool")

    @property
    def sample(self) -> Sample:
        return self._made("sample")

    @property
    def job(self) -> MatchJob:
        return self._made("job")


def _timed(name: str, unit: str, work: Callable[[], int]) -> Stage:
    started = time.perf_counter()
    units = work()
    return Stage(name, time.perf_counter() - started, units, unit)


def stage_import(run: ScaleRun) -> Stage:
    """The documents (collection_import)."""

    def work() -> int:
        summary = collection_import(path=run.world.docs, name=run.name)
        run.made["collection"] = Collection.objects.get(name=run.name)
        return summary.records

    return _timed("import", "documents", work)


def stage_import_runs(run: ScaleRun) -> Stage:
    """Topics, the nugget bank and the runs (their entries are the units)."""

    def work() -> int:
        topics_import(path=run.world.topics, collection=run.collection)
        nugget_bank_import(
            path=run.world.nuggets, collection=run.collection, name="scale-nuggets"
        )
        summaries = runs_import(paths=run.world.runs, collection=run.collection)
        return sum(s.records for s in summaries)

    return _timed("import_runs", "run entries", work)


def stage_pool(run: ScaleRun) -> Stage:
    def work() -> int:
        runs = list(Run.objects.filter(collection=run.collection).order_by("name"))
        run.made["pool"] = pool_build(
            collection=run.collection, runs=runs, depth=POOL_DEPTH, name="scale-pool"
        )
        return run.pool.documents.count()

    return _timed("pool", "pooled documents", work)


def stage_sample(run: ScaleRun) -> Stage:
    """A statAP sample of a tenth of the pool: per topic, a tenth of the mean
    topic pool."""

    def work() -> int:
        pooled = run.pool.documents.count()
        topics = max(1, run.pool.documents.values("topic").distinct().count())
        size = max(SAMPLE_MIN, math.ceil(SAMPLE_SHARE * pooled / topics))
        run.made["sample"] = sample_draw(
            pool=run.pool,
            size=size,
            method=Sample.Method.STATAP,
            seed=57,
            name="scale-statap",
        )
        return SampleDocument.objects.filter(sample=run.sample).count()

    return _timed("sample", "sampled documents", work)


def stage_judging(run: ScaleRun) -> Stage:
    """An assessor judges every sampled document by the generator's truth, through
    the assessor's own path (assignment, then one judgment_record per document)."""
    user, _ = get_user_model().objects.get_or_create(username=f"{run.name}-assessor")

    def work() -> int:
        assignment_create(sample=run.sample, assessors=[user])
        drawn = SampleDocument.objects.filter(sample=run.sample).select_related(
            "topic", "document"
        )
        done = 0
        for row in drawn.order_by("topic_id", "order").iterator(chunk_size=2000):
            judgment_record(
                assessor=user,
                topic=row.topic,
                document=row.document,
                relevance=run.world.truth(row.topic.qid, row.document.docno),
                active_seconds_delta=5,
            )
            done += 1
        return done

    return _timed("judging", "judgments", work)


def match_job(run: ScaleRun, progress: Callable[[str], None]) -> MatchJob:
    """A matching job over every document of the collection for every topic (pool
    and sample attached), waited for; progress lines every 10 s."""
    job = match_job_launch(
        collection=run.collection,
        topics=list(run.collection.topics.all()),
        source=MatchJob.Source.COLLECTION,
        pool=run.pool,
        sample=run.sample,
        name=f"{run.name}-{uuid.uuid4().hex[:4]}",
    )
    said = time.monotonic()
    while True:
        job.refresh_from_db()
        if job.status in ("done", "failed", "cancelled"):
            break
        if time.monotonic() - said >= 10:
            progress(f"    matching: {job.docs_done:,} of {job.docs_total:,}")
            said = time.monotonic()
        time.sleep(0.3)
    if job.status != "done":
        raise RuntimeError(f"job {job.pk} {job.status}: {job.error}")
    return job


def stage_match(run: ScaleRun, progress: Callable[[str], None]) -> Stage:
    def work() -> int:
        run.made["job"] = match_job(run, progress)
        return run.job.docs_total

    return _timed("match", "document-topic pairs", work)


def stage_fit(run: ScaleRun) -> Stage:
    return _timed(
        "fit",
        "document-topic pairs",
        lambda: job_model_fit(job=run.job, reliability=True).documents,
    )


def stage_export(run: ScaleRun, kind: str, folder: Path) -> Stage:
    """The export of ``kind`` for the job, written to a file as the command does."""

    def work() -> int:
        request = ExportRequest(kind=kind, collection=run.collection, job=run.job)
        export = export_make(request)
        export.write(folder / f"{kind}.txt")
        return len(export.lines)

    return _timed(f"export_{kind}", "lines", work)


def stage_evaluate(run: ScaleRun) -> Stage:
    """``manage.py evaluate --job N --collection C --summary``: every stored run.
    Its units are the job's (topic, document) pairs: the model-assisted estimates
    cross-fit p over every one of them (the population of a job over the whole
    collection), whatever the number of runs."""

    def work() -> int:
        out = io.StringIO()
        call_command(
            "evaluate",
            job=run.job.pk,
            collection=run.name,
            summary=True,
            stdout=out,
            stderr=io.StringIO(),
        )
        return run.job.docs_total

    return _timed("evaluate", "document-topic pairs", work)


def stage_pages(run: ScaleRun, repeats: int) -> Stage:
    """The job's topic list, three topics' pages (top documents, charts) and a
    document page, requested once, then ``repeats`` times in turn as a staff user;
    the stage's time is that of the repeated requests."""
    staff, _ = get_user_model().objects.get_or_create(
        username=f"{run.name}-staff", defaults={"is_staff": True}
    )
    client = Client()
    client.force_login(staff)
    qids = sorted(run.job.topics.values_list("qid", flat=True), key=int)
    doc = Document.objects.filter(collection=run.collection).order_by("pk")[0]
    urls = [("topic list", reverse("job-detail", args=[run.job.pk]))]
    urls += [("topic", reverse("job-topic", args=[run.job.pk, q])) for q in qids[:3]]
    urls.append(
        ("document", reverse("job-document", args=[run.job.pk, qids[0], doc.pk]))
    )

    def work() -> int:
        # Pages link static files by name: no collectstatic manifest needed here.
        plain = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
        with override_settings(
            STORAGES={**settings.STORAGES, "staticfiles": plain},
            ALLOWED_HOSTS=[*settings.ALLOWED_HOSTS, "testserver"],
        ):
            return _requests(client, urls, run, repeats)

    work()
    # The rate of the repeated requests: the first request of each page computes
    # what it keeps (its time is reported apart, per page kind).
    repeated = [t for times in run.page_ms.values() for t in times]
    return Stage("pages", sum(repeated) / 1000, len(repeated), "requests")


def _requests(
    client: Client, urls: list[tuple[str, str]], run: ScaleRun, repeats: int
) -> int:
    """Each page once (the first request computes what later ones reuse: its time
    is kept apart), then ``repeats`` rounds of all of them."""
    for kind, url in urls:
        started = time.perf_counter()
        _get(client, url)
        first = 1000 * (time.perf_counter() - started)
        run.page_first_ms[kind] = max(run.page_first_ms.get(kind, 0.0), first)
    for _ in range(repeats):
        for kind, url in urls:
            started = time.perf_counter()
            _get(client, url)
            run.page_ms.setdefault(kind, []).append(
                1000 * (time.perf_counter() - started)
            )
    return sum(len(times) for times in run.page_ms.values())


def _get(client: Client, url: str) -> None:
    response = client.get(url, secure=True)  # production settings redirect to https
    if response.status_code != 200:
        raise RuntimeError(f"GET {url}: {response.status_code}")


def p95(values: list[float]) -> float:
    """The 95th percentile (nearest rank)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def database_mb() -> float:
    """The size of the database on disk, in MB."""
    if connection.vendor != "postgresql":
        return 0.0
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        return cursor.fetchone()[0] / 1e6


def scale_drop(name: str) -> None:
    """Delete the collection ``name`` and everything of it. The rows that hang on its
    documents go by plain SQL in one transaction (PostgreSQL checks the deferred
    foreign keys at commit): the ORM's cascade would load every one of them first."""
    collection = Collection.objects.filter(name=name).first()
    if collection is not None:
        quote = connection.ops.quote_name
        docs = quote(Document._meta.db_table)
        with transaction.atomic(), connection.cursor() as cursor:
            for rel in Document._meta.related_objects:
                table = quote(rel.related_model._meta.db_table)
                column = quote(str(rel.field.column))
                cursor.execute(
                    f"DELETE FROM {table} WHERE {column} IN "
                    f"(SELECT id FROM {docs} WHERE collection_id = %s)",
                    [collection.pk],
                )
            cursor.execute(
                f"DELETE FROM {docs} WHERE collection_id = %s", [collection.pk]
            )
            # The bank's nuggets (no document) protect their topics from the cascade.
            Nugget.objects.filter(topic__collection=collection).delete()
            collection.delete()
    get_user_model().objects.filter(
        username__in=[f"{name}-assessor", f"{name}-staff"]
    ).delete()
