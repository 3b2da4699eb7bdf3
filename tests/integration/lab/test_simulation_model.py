"""The simulation with the relevance model on the real ADI collection: the report's new
figures, human labels over probabilities, and the same report whatever the hash seed."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lab.services.simulation import SimulationConfig, simulation_run
from lab.services.simulation_report import report_build
from nuggets_app.ir.expected import qrels_probabilities
from nuggets_app.models import Run

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.django_db
def test_model_inference_reports_probabilities_that_add_up(adi):
    collection, qrels = adi
    config = SimulationConfig(depth=30, sample_size=8, seed=3, rule="fit:f1")
    data = simulation_run(
        collection=collection, qrels_path=qrels, runs=Run.objects.all(), config=config
    )
    report = report_build(data)

    assert data.probabilities is not None
    assert set(data.probabilities) == set(data.pool)
    unjudged = [
        (q, d) for q, docs in data.pool.items() for d in docs if d not in data.human[q]
    ]
    values = [data.probabilities[q][d] for q, docs in data.pool.items() for d in docs]
    assert all(0.0 <= p <= 1.0 for p in values)
    assert len(set(values)) > 1
    assert report["expected_relevant"] == pytest.approx(
        math.fsum(data.probabilities[q][d] for q, d in unjudged)
    )
    truth = {(q, d) for q, docs in data.truth.items() for d, g in docs.items() if g}
    assert report["true_relevant_unjudged"] == sum(1 for k in unjudged if k in truth)
    bins = report["calibration"]
    assert sum(b["n"] for b in bins) == len(unjudged)
    for b in bins:
        if b["n"]:
            assert b["bin_low"] <= b["mean_p"] <= b["bin_high"]
            assert 0.0 <= b["observed"] <= 1.0
    # Only unjudged documents are inferred; human labels win in the expected qrels.
    for qid, docs in data.inferred.items():
        assert not docs & set(data.human[qid])
    merged = qrels_probabilities(data.human, data.probabilities)
    for qid, labels in data.human.items():
        for docno, grade in labels.items():
            assert merged[qid][docno] == float(grade >= 1)
    for key in ("sample_only", "sample_plus_inferred", "statap", "eap"):
        assert -1.0 <= report["tau"][key] <= 1.0
    assert 0.0 <= report["map_unjudged"] <= 1.0
    assert 0.0 <= report["baseline_map_unjudged"] <= 1.0
    assert report["model"]["feature_names"]
    # Anchored: judged relevant documents plus the unjudged ones' p add up to the
    # sample's Horvitz-Thompson estimate, each judged relevant document counting 1 / pi.
    relevant = [
        (q, d) for q, labels in data.human.items() for d, g in labels.items() if g >= 1
    ]
    estimate = math.fsum(1.0 / data.sample[q][d] for q, d in relevant)
    assert report["model"]["shift"] != 0.0
    assert len(relevant) + report["expected_relevant"] == pytest.approx(estimate)


def _simulate(tmp: Path, data: Path, hash_seed: str) -> dict:
    env = {
        **os.environ,
        "PYTHONHASHSEED": hash_seed,
        "DATA_DIR": str(tmp),
        "DEBUG": "1",
    }
    env.pop("DATABASE_URL", None)  # each process its own embedded SQLite database
    steps = [
        ["migrate", "-v0"],
        ["import_collection", "--name", "adi", str(data / "docs.jsonl.gz")],
        ["import_topics", "--collection", "adi", str(data / "topics.jsonl")],
        [
            "make_runs",
            "--collection",
            "adi",
            "--out",
            str(tmp / "runs"),
            "--depth",
            "50",
        ],
        [
            "simulate",
            "--collection",
            "adi",
            "--qrels",
            str(data / "qrels.txt"),
            "--depth",
            "30",
            "--sample-size",
            "20%",
            "--seed",
            "4",
            "--out",
            str(tmp / "out"),
        ],
    ]
    for step in steps:
        subprocess.run(
            [sys.executable, "manage.py", *step],
            cwd=REPO,
            env=env,
            check=True,
            capture_output=True,
            timeout=600,
        )
    report = json.loads((tmp / "out" / "report.json").read_text())
    report.pop("timings")
    return report


def test_the_same_seed_gives_the_same_report_whatever_the_hash_seed(
    shared_data, tmp_path
):
    first = _simulate(tmp_path / "a", shared_data / "adi", "1")
    second = _simulate(tmp_path / "b", shared_data / "adi", "2")
    assert first["nuggets"] > 0
    assert first == second
