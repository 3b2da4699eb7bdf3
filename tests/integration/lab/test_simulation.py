"""The simulation end to end on the real ADI collection (82 documents, 35 topics).

Runs are made by the run suite, pooled at depth 20; the statAP sample holds 8 documents
per topic. The checks are invariants that hold whatever the numbers: judged counts equal
the sample size (capped by the pool), human labels override inferred ones, the full
qrels rank the systems exactly as themselves (tau 1), and the effort figures add up.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from lab.maths.simulation import ExtractionOptions
from lab.services.simulation import (
    SimulationConfig,
    simulation_run,
)
from lab.services.simulation_config import SIMULATED_ASSESSOR
from lab.services.simulation_report import report_build, report_write
from nuggets_app.models import Judgment, Nugget, PoolDocument, Run

pytestmark = pytest.mark.django_db
SIZE = 8
REQUIRED_KEYS = {
    "pool_size",
    "judged",
    "nuggets",
    "inferred_relevant",
    "matcher_map",
    "baseline_map",
    "precision",
    "recall",
    "tau",
}


def test_simulation_on_adi_keeps_its_invariants(adi, tmp_path):
    collection, qrels = adi
    # top:1000 infers every positively scored document, so the matcher surely
    # disagrees with some human label and the override is exercised.
    config = SimulationConfig(
        depth=20,
        sample_size=SIZE,
        seed=7,
        rule="top:1000",
        inference="paper",
        extraction=ExtractionOptions(nuggets_per_doc=2, max_terms=8),
    )
    data = simulation_run(
        collection=collection, qrels_path=qrels, runs=Run.objects.all(), config=config
    )
    report = report_build(data)

    pool_rows = PoolDocument.objects.filter(topic__collection=collection)
    pool_sizes = {q: len(d) for q, d in data.pool.items()}
    assert report["pool_size"] == pool_rows.count() == sum(pool_sizes.values())
    for qid, size in pool_sizes.items():
        assert len(data.sample[qid]) == min(SIZE, size)
    judgments = Judgment.objects.filter(assessor__username=SIMULATED_ASSESSOR)
    assert (
        report["judged"]
        == judgments.count()
        == sum(min(SIZE, s) for s in pool_sizes.values())
    )
    for judgment in judgments.select_related("topic", "document"):
        expected = data.truth.get(judgment.topic.qid, {}).get(
            judgment.document.docno, 0
        )
        assert judgment.relevance == expected

    effort = report["effort"]
    assert effort["judged"] + effort["unjudged"] == effort["pool_size"]
    nuggets = Nugget.objects.filter(assessor__username=SIMULATED_ASSESSOR)
    assert report["nuggets"] == nuggets.count() == sum(data.nuggets.values()) > 0
    relevant_judged = sum(
        1 for labels in data.human.values() for g in labels.values() if g >= 1
    )
    assert effort["judged_relevant"] == relevant_judged
    assert nuggets.values("document").distinct().count() <= relevant_judged
    for nugget in nuggets.select_related("document"):
        assert nugget.document.text[nugget.start : nugget.end] == nugget.span_text

    merged = data.merged()
    overridden = 0
    for qid, labels in data.human.items():
        for docno, grade in labels.items():
            assert merged[qid][docno] == int(grade >= 1)
            overridden += docno in data.inferred.get(qid, set()) and grade < 1
    assert overridden > 0
    assert report["inferred_relevant"] <= effort["unjudged"]

    assert report["tau"]["full_with_itself"] == pytest.approx(1.0, abs=1e-12)
    assert report["systems"]["runs"] == Run.objects.count() >= 12
    for key in ("sample_only", "sample_plus_inferred", "statap"):
        assert -1.0 <= report["tau"][key] <= 1.0

    written = report_write(report, tmp_path / "report")
    assert {p.name for p in written} >= {"report.json", "report.md", "found_curve.png"}
    stored = json.loads((tmp_path / "report" / "report.json").read_text())
    assert set(stored) >= REQUIRED_KEYS
    assert set(stored["tau"]) >= {"sample_only", "sample_plus_inferred", "statap"}


def test_a_bad_qrels_line_is_reported_and_nothing_is_saved(adi, tmp_path):
    _, qrels = adi
    bad = tmp_path / "qrels.txt"
    lines = qrels.read_text().splitlines()
    bad.write_text("\n".join([lines[0], "1 0 7", *lines[1:]]) + "\n")
    with pytest.raises(CommandError, match=rf"{bad.name}:2:"):
        call_command(
            "simulate",
            "--collection",
            "adi",
            "--qrels",
            str(bad),
            "--depth",
            "10",
            "--sample-size",
            "5",
        )
    assert not Judgment.objects.exists()
    assert not PoolDocument.objects.exists()


def test_make_runs_writes_trec_runs_from_files(shared_data, tmp_path):
    base = shared_data / "adi"
    out = tmp_path / "runs"
    call_command(
        "make_runs",
        "--docs",
        str(base / "docs.jsonl.gz"),
        "--topics",
        str(base / "topics.jsonl"),
        "--out",
        str(out),
        "--depth",
        "5",
    )
    files = sorted(out.glob("*.run"))
    assert len(files) >= 12
    docnos = {json.loads(line)["docno"] for line in _gz_lines(base / "docs.jsonl.gz")}
    for path in files:
        rows = [line.split() for line in path.read_text().splitlines()]
        assert rows
        assert all(len(r) == 6 and r[1] == "Q0" and r[2] in docnos for r in rows)
        assert all(r[5] == path.stem for r in rows)
        per_topic: dict[str, int] = {}
        for r in rows:
            per_topic[r[0]] = per_topic.get(r[0], 0) + 1
        assert max(per_topic.values()) <= 5


def _gz_lines(path: Path) -> list[str]:
    import gzip

    with gzip.open(path, "rt") as lines:
        return list(lines)


def test_topics_the_qrels_do_not_hold_are_neither_pooled_judged_nor_evaluated(
    adi, tmp_path
):
    """A query without judgments was never assessed (CACM and CISI list such queries):
    its truth is unknown, so the simulation leaves it out and says so."""
    collection, qrels = adi
    kept = [
        line
        for line in qrels.read_text().splitlines()
        if line.split()[0] not in {"1", "2"}
    ]
    partial = tmp_path / "qrels-partial.txt"
    partial.write_text("\n".join(kept) + "\n")
    config = SimulationConfig(
        depth=20, sample_size=SIZE, seed=7, rule="top:1000", inference="paper",
        extraction=ExtractionOptions(nuggets_per_doc=2, max_terms=8),
    )  # fmt: skip
    data = simulation_run(
        collection=collection, qrels_path=partial, runs=Run.objects.all(), config=config
    )
    report = report_build(data)
    judged = {line.split()[0] for line in kept}
    assert set(data.pool) == judged
    assert {q for run in data.runs.values() for q in run} == judged
    assert report["topics_without_qrels"] == ["1", "2"]
    left_out = Judgment.objects.filter(
        assessor__username=SIMULATED_ASSESSOR, topic__qid__in=["1", "2"]
    )
    assert not left_out.exists()
    assert not PoolDocument.objects.filter(topic__qid__in=["1", "2"]).exists()
