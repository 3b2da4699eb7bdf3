"""The scale benchmark at a tiny size: every stage runs through the product on a real
worker, the JSON has its keys, and nothing it made is left behind."""

from __future__ import annotations

import io
import json

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command

from nuggets_app.models import Collection, MatchJob

STAGES = [
    "import",
    "import_runs",
    "pool",
    "sample",
    "judging",
    "match",
    "fit",
    "export_inferred",
    "export_probabilistic",
    "evaluate",
    "pages",
]


@pytest.fixture
def services():
    if (
        not settings.REDIS_URL
        or "postgresql" not in settings.DATABASES["default"]["ENGINE"]
    ):
        pytest.skip("bench_scale needs PostgreSQL and Redis")


def test_bench_scale_runs_every_stage_at_both_sizes_and_cleans_up(
    transactional_db, services, tmp_path
):
    out = io.StringIO()
    path = tmp_path / "scale.json"
    call_command(
        "bench_scale",
        *("--docs", "300", "--topics", "2", "--runs", "2", "--workers", "1"),
        *("--repeats", "1", "--json", str(path)),
        stdout=out,
    )
    figures = json.loads(path.read_text())
    assert list(figures["stages"]) == STAGES
    for name, stage in figures["stages"].items():
        assert {"seconds", "rate", "ratio_to_tenth", "peak_rss_mb"} <= set(stage)
        assert stage["units"] > 0, name
        assert figures["tenth"][name]["units"] > 0, name
    assert figures["stages"]["import"]["units"] == 300
    assert figures["tenth"]["import"]["units"] == 30
    # every document for every topic
    assert figures["stages"]["match"]["units"] == 600
    assert figures["workers_speedup"] == 1.0
    for key in ("total_seconds", "peak_rss_mb", "page_p95_ms"):
        assert figures[key] > 0, key
    text = out.getvalue()
    assert "300 match: 600 document-topic pairs" in text
    assert f"wrote {path}" in text
    assert not Collection.objects.filter(name__startswith="bench-scale").exists()
    assert not MatchJob.objects.exists()
    assert not get_user_model().objects.filter(username__startswith="bench-scale")
