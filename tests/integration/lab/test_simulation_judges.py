"""``simulate --judge-labels`` and ``--judge-table`` on the real ADI collection: the
judges come in through the product's importer, the job's fit reads them, and
report.json says which it kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from lab.maths.judge_tables import judge_draw, table_write
from nuggets_app.models import JobInference, Judge

pytestmark = pytest.mark.django_db


def _simulate(qrels: Path, out: Path, *extra: str) -> dict:
    call_command(
        "simulate", "--collection", "adi", "--qrels", str(qrels), "--depth", "20",
        "--sample-size", "8", "--seed", "2", "--replace", "--out", str(out), *extra,
    )  # fmt: skip
    return json.loads((out / "report.json").read_text())


def test_a_judges_labels_file_is_read_by_the_fit_and_reported(adi, tmp_path):
    collection, qrels = adi
    # A judge that agrees with the people's qrels (relevant documents at grade 2).
    judge = tmp_path / "oracle.qrels"
    judge.write_text(
        "".join(f"{q} 0 {d} 2\n" for q, _, d, *_ in (line.split() for line in
                qrels.read_text().splitlines()))
    )  # fmt: skip
    report = _simulate(qrels, tmp_path / "with", "--judge-labels", str(judge))
    families = report["families"]
    assert [c["judge"] for c in families["judges"]] == ["oracle"]
    assert families["judges"][0]["kept"] is True
    assert "judge:oracle" in families["kept"]
    assert {"tau", "families"} <= set(report)
    stored = JobInference.objects.order_by("-pk").first()
    assert stored is not None
    assert "judge:oracle:value" in stored.model["feature_names"]
    assert Judge.objects.get(collection=collection, name="oracle").used_at

    # A new simulation without judges replaces the collection's judges (none left).
    report = _simulate(qrels, tmp_path / "without")
    assert report["families"]["judges"] == []
    assert not Judge.objects.filter(collection=collection).exists()


def test_a_judge_drawn_from_a_table_is_imported(adi, tmp_path):
    _, qrels = adi
    table = tmp_path / "flat.json"
    table_write(table, {0: {0: 0.5, 1: 0.5}, 1: {1: 1.0}}, judge="flat")
    report = _simulate(qrels, tmp_path / "out", "--judge-table", f"flat={table}")
    assert [c["judge"] for c in report["families"]["judges"]] == ["flat"]
    assert Judge.objects.get(name="flat").labels.count() > 0


def test_a_draw_follows_the_table_and_the_seed():
    pooled = {"1": [f"d{i}" for i in range(400)]}
    truth = {"1": {f"d{i}": 1 for i in range(200)}}
    table = {0: {0: 0.9, 2: 0.1}, 1: {2: 1.0}}
    drawn = judge_draw(table, pooled, truth, seed=4, name="j")
    assert drawn == judge_draw(table, pooled, truth, seed=4, name="j")
    assert all(drawn[("1", f"d{i}")] == 2 for i in range(200))
    wrong = sum(drawn[("1", f"d{i}")] == 2 for i in range(200, 400))
    assert 5 <= wrong <= 40
