"""Benchmark of the researcher dashboard: first and second request of each page on full
Cranfield with all 36 runs (loaded from ``../shared/data/cranfield`` when missing).

Not a test: it prints, per page, the first request (computes and keeps the result: the
baseline, what every request cost before results were kept), the median of the
following requests (served from the kept result) and their ratio; then a CSV download.
Tasks run in-process (no ``REDIS_URL``), so the first request includes the computation
that a worker would otherwise do. Target: second request < 200 ms.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management.base import BaseCommand, CommandError
from django.test import Client, override_settings
from django.urls import reverse

from nuggets_app.ir.measures import DEFAULT_MEASURES, measures_parse
from nuggets_app.models import Collection, Qrels, Run
from nuggets_app.services import dashboards
from nuggets_app.services.imports import (
    collection_import,
    qrels_import,
    runs_import,
    topics_import,
)
from nuggets_app.services.inference import DecisionRule

NAME = "bench-cranfield"
USER = "bench-dashboard-staff"


def shared_cranfield() -> Path:
    return Path(settings.BASE_DIR).parent / "shared" / "data" / "cranfield"


class Command(BaseCommand):
    help = "Dashboard pages on full Cranfield: first request against kept results."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--data", default="", help="Cranfield folder")
        parser.add_argument("--repeat", type=int, default=5, help="kept requests")

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
        runs = Run.objects.filter(collection=collection).count()
        self.stdout.write(
            f"collection {collection.name}: {runs} runs, "
            f"{collection.topics.count()} topics, qrels {qrels.name}; "
            "wall time per request through the Django test client"
        )
        client = Client(HTTP_HOST=(settings.ALLOWED_HOSTS or ["localhost"])[0])
        staff, _ = get_user_model().objects.get_or_create(
            username=USER, defaults={"is_staff": True}
        )
        client.force_login(staff)
        rule = dashboards.rule_params(DecisionRule(threshold=0.5))
        base = {"kind": "threshold", "threshold": "0.5", "n": "100"}
        pages = [
            ("runs", {**base, "qrels": f"qrels:{qrels.pk}", "sample": ""},
             dashboards.runs_evaluation,
             {"qrels": f"qrels:{qrels.pk}", "rule": rule, "sample": None,
              "measures": [str(m) for m in measures_parse(DEFAULT_MEASURES)]}),
            ("compare", {**base, "qrels_a": f"qrels:{qrels.pk}", "qrels_b": "human",
                         "measure": "AP"},
             dashboards.qrels_comparison,
             {"qrels_a": f"qrels:{qrels.pk}", "qrels_b": "human", "rule": rule,
              "measure": "AP"}),
        ]  # fmt: skip
        for page, query, computation, params in pages:
            url = reverse("evaluation-page", args=[collection.pk, page])
            # A fresh start: forget what an earlier run of the benchmark kept.
            cache.delete(computation.key(collection_id=collection.pk, **params))
            first = _get(client, url, query)
            kept = [_get(client, url, query) for _ in range(opts["repeat"])]
            second = statistics.median(kept)
            self.stdout.write(
                f"{page:8s} first request {first * 1000:8.0f} ms (computes); "
                f"next {second * 1000:6.1f} ms (median of {len(kept)}, kept result); "
                f"ratio {second / first:.3f}; speed-up {first / second:.0f}x"
            )
        csv_url = reverse(
            "evaluation-csv", args=[collection.pk, "runs", "evaluation_topics"]
        )
        query = pages[0][1]
        first = _get(client, csv_url, query)
        again = statistics.median(_get(client, csv_url, query) for _ in range(3))
        self.stdout.write(
            f"per-topic CSV download: first {first * 1000:.0f} ms, "
            f"next {again * 1000:.1f} ms (kept text)"
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


def _get(client: Client, url: str, query: dict) -> float:
    start = time.perf_counter()
    response = client.get(url, query, secure=True)
    elapsed = time.perf_counter() - start
    if response.status_code != 200:
        raise CommandError(f"{url}: HTTP {response.status_code}")
    return elapsed
