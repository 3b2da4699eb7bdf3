"""Inferred graded qrels of a real Cranfield job (graded judgments from the Cranfield
qrels): human grades override, the ordinal model's median grade and grade
probabilities, the nugget rule against the stored scores, round trip through
import_qrels, and the export_qrels command."""

from __future__ import annotations

import io
import math

import pytest
from django.core.management import CommandError, call_command

from nuggets_app.collection.services.imports import qrels_import
from nuggets_app.inference.services.graded import graded_export, job_levels
from nuggets_app.models import Judgment, MatchResult, Qrels
from tests.helpers import read_qrels
from tests.integration.worlds.cranfield_pool import cranfield_world, pool_job

pytestmark = pytest.mark.django_db
QIDS = ("3", "4", "8")


@pytest.fixture
def world(shared_data, assessor):
    world = cranfield_world(shared_data, assessor, qids=QIDS, per_topic=20, judge=10)
    truth = read_qrels(shared_data / "cranfield" / "qrels.txt", QIDS)
    for j in Judgment.objects.filter(topic__in=world.topics).select_related(
        "topic", "document"
    ):
        j.relevance = truth[j.topic.qid].get(j.document.docno, 0)
        j.save(update_fields=["relevance"])
    return world


@pytest.fixture
def job(world, settings):
    return pool_job(world, settings, chunk_size=20)


def _judged(world) -> dict[tuple[str, str], int]:
    return {
        (j.topic.qid, j.document.docno): j.relevance
        for j in Judgment.objects.filter(topic__in=world.topics).select_related(
            "topic", "document"
        )
    }


def test_model_grades_are_the_median_of_per_grade_probabilities(world, job):
    export = graded_export(job=job, source="model")
    judged = _judged(world)
    levels = [0, *job_levels(job)]
    assert levels[-1] == max(judged.values())
    lines = export.provenance["lines"]
    assert len(lines) == 60
    assert export.lines == [f"{r['qid']} 0 {r['docno']} {r['rel']}" for r in lines]
    for rec in lines:
        key = (rec["qid"], rec["docno"])
        if key in judged:
            assert (rec["rel"], rec["source"]) == (judged[key], "person")
            continue
        assert rec["source"] == "model"
        probs = rec["p_grade"]
        assert len(probs) == len(levels)
        assert sum(probs) == pytest.approx(1.0, abs=1e-5)
        # Median grade: P(grade >= rel) >= 0.5 and P(grade > rel) < 0.5.
        at = levels.index(rec["rel"])
        assert sum(probs[at:]) >= 0.5 - 1e-5
        assert sum(probs[at + 1 :]) < 0.5 + 1e-5
        assert rec["expected_gain"] == pytest.approx(
            sum(p * g for p, g in zip(probs, levels, strict=True)), abs=1e-4
        )


def test_nugget_grades_follow_the_match_strength(world, job):
    export = graded_export(job=job, source="nuggets", threshold=0.5, strong=0.8)
    judged = _judged(world)
    best = {
        (q, d): s
        for q, d, s in MatchResult.objects.filter(job=job).values_list(
            "topic__qid", "document__docno", "score"
        )
    }
    inferred = [
        r for r in export.provenance["lines"] if (r["qid"], r["docno"]) not in judged
    ]
    assert inferred
    for rec in inferred:
        score = best[(rec["qid"], rec["docno"])]
        # The best nugget's score decides whether any nugget reaches the threshold.
        assert (rec["rel"] > 0) == (score >= 0.5), rec
    assert export.provenance["rule"] == {"threshold": 0.5, "strong": 0.8}


def test_graded_qrels_round_trip_and_command(world, job, tmp_path):
    path = tmp_path / "graded.qrels"
    out = io.StringIO()
    call_command(
        "export_qrels",
        collection=world.collection.name,
        kind="graded",
        job=job.pk,
        output=path,
        stderr=out,
    )
    assert (tmp_path / "graded.qrels.provenance.json").exists()
    assert path.read_text() == graded_export(job=job, source="model").text()
    qrels_import(path=path, collection=world.collection, name="graded")
    imported = {
        (e.topic.qid, e.document.docno): e.relevance
        for e in Qrels.objects.get(name="graded").entries.select_related(
            "topic", "document"
        )
    }
    exported = {
        (q, d): int(rel)
        for q, _, d, rel in (line.split() for line in path.read_text().splitlines())
    }
    assert imported == exported
    with pytest.raises(
        CommandError,
        match=r"graded exports come from a matching job: name one \(--job\)",
    ):
        call_command("export_qrels", collection=world.collection.name, kind="graded")


def test_evaluate_graded_gives_expected_ndcg_with_the_ordinal_models_gains(
    world, job, tmp_path
):
    run = tmp_path / "run.txt"
    docs = [d.docno for d in world.pooled["3"]][::-1]
    run.write_text(
        "".join(f"3 Q0 {d} {i + 1} {100 - i} mine\n" for i, d in enumerate(docs))
    )
    out = io.StringIO()
    call_command("evaluate", "--job", str(job.pk), "--graded", str(run), stdout=out)
    values = {
        (m, t): float(v)
        for m, t, v in (line.split("\t") for line in out.getvalue().splitlines())
    }
    # The gains by hand: a judged document's grade, an unjudged one's sum over grades
    # of P(grade = g) * g from the sidecar's per-grade probabilities.
    export = graded_export(job=job, source="model")
    levels = export.provenance["levels"]
    gains: dict[str, dict[str, float]] = {}
    for line in export.provenance["lines"]:
        gain = (
            float(line["rel"])
            if line["source"] == "person"
            else sum(p * g for p, g in zip(line["p_grade"], levels, strict=True))
        )
        gains.setdefault(line["qid"], {})[line["docno"]] = gain
    judged = _judged(world)
    assert all(gains[q][d] == g for (q, d), g in judged.items())
    assert any(0 < g < 1 for g in gains["3"].values())  # inferred, fractional gains

    def endcg(k: int) -> float:
        ideal = sorted(gains["3"].values(), reverse=True)[:k]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        dcg = sum(
            gains["3"].get(d, 0.0) / math.log2(i + 2) for i, d in enumerate(docs[:k])
        )
        return dcg / idcg

    assert values[("EnDCG@10", "3")] == pytest.approx(endcg(10), abs=1e-5)
    assert values[("EnDCG@100", "3")] == pytest.approx(endcg(100), abs=1e-5)
    assert values[("EnDCG@10", "4")] == 0.0  # the run does not answer topic 4
    with pytest.raises(CommandError, match="binary relevance"):
        call_command(
            "evaluate", "--job", str(job.pk), "--graded", str(run), "--measures", "EAP"
        )
    with pytest.raises(CommandError, match="needs --job"):
        call_command("evaluate", "--graded", str(run))
