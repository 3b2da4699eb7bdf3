"""The releases tests' world: the demo judged by the simulated assessor (``demo``,
then ``simulate`` with the demo's qrels: a depth-20 pool, a statAP sample of 8 per
topic, judgments and nuggets cut from the relevant documents, a finished job)."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.management import call_command

from nuggets_app.demo.generate import DATA_DIR
from nuggets_app.models import Collection, MatchJob, Sample


@dataclass
class DemoWorld:
    collection: Collection
    job: MatchJob
    sample: Sample


@pytest.fixture
def simulated_demo(tmp_path: Path) -> DemoWorld:
    call_command("demo", "--allow-demo-passwords", stdout=io.StringIO())
    out = tmp_path / "simulation"
    call_command(
        "simulate", "--collection", "demo", "--qrels", str(DATA_DIR / "qrels.txt"),
        "--depth", "20", "--sample-size", "8", "--seed", "3", "--out", str(out),
        stdout=io.StringIO(), stderr=io.StringIO(),
    )  # fmt: skip
    report = json.loads((out / "report.json").read_text())
    job = MatchJob.objects.get(pk=report["job"]["id"])
    sample = Sample.objects.get(
        name=report["job"]["sample"], pool__collection__name="demo"
    )
    return DemoWorld(collection=job.collection, job=job, sample=sample)
