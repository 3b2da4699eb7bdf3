"""Benchmark of the researcher dashboard: first and second request of each page on full
Cranfield with all 36 runs (loaded from ``../shared/data/cranfield`` when missing).

Not a test: it prints, per page (*Evaluate runs*, *Compare qrels*, *Trust
diagnostics*, *Verification*), the first request (computes and keeps the result: the
baseline, what every request cost before results were kept), the median of the
following requests (served from the kept result) and their ratio; then, per download of
the page (CSV tables, SVG charts), the first download (draws it from the kept result)
and the median of the next ones (a kept CSV text; a chart drawn from its kept geometry). The trust and verification pages
need a finished matching job and a judged verification sample: the first run makes
them from the qrels (``_dashboard_world``). Tasks run in-process (no ``REDIS_URL``), so
the first request includes the computation that a worker would otherwise do. Target:
second request < 200 ms.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management.base import BaseCommand, CommandError
from django.test import Client, override_settings
from django.urls import reverse

from nuggets_app.benchmarks.dashboard_world import DashboardWorld, dashboard_world
from nuggets_app.collection.services.imports import (
    collection_import,
    qrels_import,
    runs_import,
    topics_import,
)
from nuggets_app.evaluation.services import dashboards
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.ir.measures import DEFAULT_MEASURES, measures_parse
from nuggets_app.models import Collection, Qrels, Run
from nuggets_app.operations.services.computed import Computation

NAME = "bench-cranfield"
USER = "bench-dashboard-staff"


def shared_cranfield() -> Path:
    return Path(settings.BASE_DIR).parent / "shared" / "data" / "cranfield"


class Command(BaseCommand):
    help = "Dashboard pages on full Cranfield: first request against kept results."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--data", default="", help="Cranfield folder")
        parser.add_argument("--repeat", type=int, default=5, help="kept requests")
        parser.add_argument(
            "--topics", type=int, default=25, help="topics of the trust page's job"
        )

    def handle(self, *args, **opts) -> None:
        # Pages link static files by name: no collectstatic manifest needed here.
        plain = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
        with override_settings(STORAGES={**settings.STORAGES, "staticfiles": plain}):
            self._bench(opts)

    def _bench(self, opts: dict) -> None:
        if settings.REDIS_URL:
            raise CommandError(
                "bench_dashboards times the computation in the request: unset REDIS_URL"
            )
        collection = self._collection(Path(opts["data"]) if opts["data"] else None)
        qrels = Qrels.objects.filter(collection=collection).order_by("pk").first()
        staff, _ = get_user_model().objects.get_or_create(
            username=USER, defaults={"is_staff": True}
        )
        world = dashboard_world(
            collection=collection, qrels=qrels, assessor=staff, topics=opts["topics"]
        )
        runs = Run.objects.filter(collection=collection).count()
        self.stdout.write(
            f"collection {collection.name}: {runs} runs, "
            f"{collection.topics.count()} topics, qrels {qrels.name}; job {world.job.pk} "
            f"over {world.topics} topics, {world.judgments} judgments, verification "
            f"sample {world.verification.name}; wall time per request through the "
            "Django test client"
        )
        client = Client(HTTP_HOST=(settings.ALLOWED_HOSTS or ["localhost"])[0])
        client.force_login(staff)
        for page in _pages(collection, qrels, world):
            self._page(client, collection, page, opts["repeat"])

    def _page(
        self, client: Client, collection: Collection, page: Page, repeat: int
    ) -> None:
        """First request and kept requests of a page, then each of its downloads."""
        url = reverse("evaluation-page", args=[collection.pk, page.name])
        params = {"collection_id": collection.pk, **page.params}
        # A fresh start: forget what an earlier run of the benchmark kept.
        cache.delete(page.computation.key(**params))
        first = _get(client, url, page.query)
        kept = [_get(client, url, page.query) for _ in range(repeat)]
        second = statistics.median(kept)
        self.stdout.write(
            f"{page.name:12s} first request {first * 1000:8.0f} ms (computes); "
            f"next {second * 1000:6.1f} ms (median of {len(kept)}, kept result); "
            f"ratio {second / first:.3f}; speed-up {first / second:.0f}x"
        )
        # Read, never started here: a missing result means the page used other values.
        state = cache.get(page.computation.key(**params)) or {}
        if state.get("status") != "done":
            raise CommandError(f"{page.name}: no result kept under {params}")
        result = state["value"]
        downloads = [
            (f"{url}csv/{t}", f"CSV {t}")
            for t in result.tables
            if page.downloads is None or t in page.downloads
        ]
        downloads += [(f"{url}plot/{f}.svg", f"SVG {f}") for f in result.figures]
        for download, label in downloads:
            first = _get(client, download, page.query)
            again = statistics.median(
                _get(client, download, page.query) for _ in range(3)
            )
            self.stdout.write(
                f"{'':12s} {label}: first {first * 1000:.0f} ms, "
                f"next {again * 1000:.1f} ms (kept)"
            )

    def _collection(self, data: Path | None) -> Collection:
        found = Collection.objects.filter(name=NAME).first()
        if found is not None and Run.objects.filter(collection=found).exists():
            return found
        data = data or shared_cranfield()
        if not (data / "docs.jsonl.gz").is_file():
            raise CommandError(f"no Cranfield data at {data} (use --data)")
        self.stdout.write(f"loading Cranfield from {data} (once) ...")
        collection_import(path=data / "docs.jsonl.gz", name=NAME)
        topics_import(path=data / "topics.jsonl", collection=NAME)
        qrels_import(path=data / "qrels.txt", collection=NAME, name="cranfield")
        runs_import(paths=sorted((data / "runs").glob("*.run.gz")), collection=NAME)
        return Collection.objects.get(name=NAME)


@dataclass(frozen=True)
class Page:
    """A dashboard page as the benchmark asks for it, and the computation it keeps."""

    name: str
    query: dict
    computation: Computation
    params: dict
    downloads: tuple[str, ...] | None = None  # CSV tables timed (None: all)


def _pages(collection: Collection, qrels: Qrels, world: DashboardWorld) -> list[Page]:
    rule = dashboards.rule_params(DecisionRule(threshold=0.5))
    base = {"kind": "threshold", "threshold": "0.5", "n": "100"}
    measures = [str(m) for m in measures_parse(DEFAULT_MEASURES)]
    job = world.job.pk
    return [
        # Without a sample or expected measures (a blank field would take the first).
        Page(
            "runs",
            {**base, "qrels": f"qrels:{qrels.pk}", "sample": "", "expected": ""},
            dashboards.runs_evaluation,
            {
                "qrels": f"qrels:{qrels.pk}",
                "rule": rule,
                "sample": None,
                "expected": None,
                "measures": measures,
            },
            downloads=("evaluation_topics",),
        ),
        Page(
            "compare",
            {
                **base,
                "qrels_a": f"qrels:{qrels.pk}",
                "qrels_b": "human",
                "measure": "AP",
            },
            dashboards.qrels_comparison,
            {
                "qrels_a": f"qrels:{qrels.pk}",
                "qrels_b": "human",
                "rule": rule,
                "measure": "AP",
            },
            downloads=(),
        ),
        Page(
            "trust",
            {
                **base,
                "job": str(job),
                "human": "human",
                "bins": "10",
                "length_bins": "10",
            },
            dashboards.trust_diagnostics,
            {"job": job, "human": "human", "rule": rule, "bins": 10, "length_bins": 10},
        ),
        Page(
            "verification",
            {"sample": str(world.verification.pk)},
            dashboards.verification_agreement,
            {"sample": world.verification.pk},
        ),
    ]


def _get(client: Client, url: str, query: dict) -> float:
    start = time.perf_counter()
    response = client.get(url, query, secure=True)
    elapsed = time.perf_counter() - start
    if response.status_code != 200:
        raise CommandError(f"{url}: HTTP {response.status_code}")
    return elapsed
