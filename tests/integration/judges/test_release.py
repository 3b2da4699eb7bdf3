"""A release of the demo carries its automatic judge's labels and description."""

from __future__ import annotations

import io
import json
import tarfile

import pytest
from django.core.management import call_command

from nuggets_app.judges.services import JudgeInfo, judge_labels_import
from tests.integration.releases.conftest import simulated_demo  # noqa: F401

pytestmark = pytest.mark.django_db


def test_a_release_carries_the_judges(simulated_demo, tmp_path):  # noqa: F811
    labels = tmp_path / "umbrela.jsonl"
    labels.write_text(
        '{"qid": "1", "docno": "demo-001", "prob_0": 0.2, "prob_1": 0.3, '
        '"prob_2": 0.5}\n{"qid": "2", "docno": "elsewhere-7", "prob_0": 1, '
        '"prob_1": 0, "prob_2": 0}\n'
    )
    judge_labels_import(
        path=labels,
        collection=simulated_demo.collection,
        name="umbrela",
        info=JudgeInfo(model="gpt-4o", prompt="UMBRELA"),
    )
    archive = tmp_path / "demo-release.tar.gz"
    call_command(
        "export_release", "--collection", "demo", "--job",
        str(simulated_demo.job.pk), "-o", str(archive), stdout=io.StringIO(),
    )  # fmt: skip
    with tarfile.open(archive) as tar:
        manifest = json.load(tar.extractfile("demo-release/manifest.json"))
        text = tar.extractfile("demo-release/judges/umbrela.jsonl").read().decode()
    (judge,) = manifest["judges"]
    assert (judge["name"], judge["model"], judge["labels"]) == ("umbrela", "gpt-4o", 2)
    assert judge["file"] == "judges/umbrela.jsonl"
    assert len(manifest["files"]["judges/umbrela.jsonl"]["sha256"]) == 64
    assert [json.loads(line)["docno"] for line in text.splitlines()] == [
        "demo-001",
        "elsewhere-7",
    ]
