"""Probabilistic qrels of a job's relevance model: format, sidecar, round trip through
import_qrels, the export command, and expected measures in evaluate."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.core.management import CommandError, call_command

from nuggets_app.collection.services.imports import qrels_import
from nuggets_app.importers.errors import ImportFormatError
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.exports import probabilistic_export, qrels_export
from nuggets_app.inference.services.job_model import job_model_fit, job_probabilities
from nuggets_app.ir.expected import run_expected
from nuggets_app.learning import relevance_features
from nuggets_app.models import Judgment, Nugget, Qrels
from tests.integration.worlds.cranfield_pool import cranfield_world, pool_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(shared_data, assessor):
    return cranfield_world(
        shared_data, assessor, qids=("3", "4"), per_topic=26, judge=14
    )


@pytest.fixture
def job(world, settings):
    job = pool_job(world, settings, chunk_size=9)
    job_model_fit(job=job)
    return job


def _lines(export) -> list[list[str]]:
    return [line.split() for line in export.text().splitlines()]


def test_one_line_per_pooled_document_with_human_overrides(world, job):
    export = probabilistic_export(job=job)
    rows = _lines(export)
    assert len(rows) == 52
    judged = {
        (j.topic.qid, j.document.docno): j.relevance
        for j in Judgment.objects.filter(topic__in=world.topics).select_related(
            "topic", "document"
        )
    }
    raw = {}
    for topic in world.topics:
        docs, p = job_probabilities(job=job, override=False)[topic.pk]
        docnos = {d.pk: d.docno for d in world.pooled[topic.qid]}
        raw.update(
            ((topic.qid, docnos[d]), v)
            for d, v in zip(docs.tolist(), p.tolist(), strict=True)
        )
    for qid, docno, rel, p, pi, source in rows:
        grade = judged.get((qid, docno))
        if grade is None:
            assert (rel, source, pi) == ("-1", "model", "-1")
            assert float(p) == raw[(qid, docno)]
        else:
            assert (int(rel), source) == (grade, "human")
            assert float(p) == float(grade >= 1)
    # Sorted by qid then docno, like every qrels export.
    assert rows == sorted(rows, key=lambda r: (int(r[0]), r[1]))
    side = export.provenance
    assert side["format"] == "probabilistic-qrels"
    assert side["columns"] == "qid docno rel p pi source"
    assert side["counts"]["human"] == len(judged) == 28
    assert side["model"]["features"] == list(relevance_features.FEATURE_NAMES)
    assert set(side["model"]["coefficients"]) == set(relevance_features.FEATURE_NAMES)
    assert len(side["model"]["calibration"]) == 2


def test_probabilistic_qrels_round_trip_through_import_qrels(world, job, tmp_path):
    path = tmp_path / "job.prob"
    probabilistic_export(job=job).write(path)
    qrels_import(path=path, collection=world.collection, name="prob")
    qrels = Qrels.objects.get(name="prob")
    assert qrels.kind == Qrels.Kind.PROBABILISTIC
    entries = {
        (e.topic.qid, e.document.docno): (e.relevance, e.probability, e.inclusion_prob)
        for e in qrels.entries.select_related("topic", "document")
    }
    for qid, docno, rel, p, _pi, _ in _lines(probabilistic_export(job=job)):
        assert entries[(qid, docno)] == (int(rel), float(p), None)
    # The binary reading of stored probabilistic qrels keeps only what people judged.
    from nuggets_app.evaluation.selectors import stored_probabilities, stored_qrels

    assert sum(len(v) for v in stored_qrels(qrels).values()) == 28
    probs = stored_probabilities(qrels)
    assert sum(len(v) for v in probs.values()) == 52


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("1 12 -1 1.5 -1 model", "probability outside [0, 1]"),
        ("1 12 -1 0.5 0 model", "inclusion probability outside (0, 1]"),
        ("1 12 -1 0.5 -1 oracle", "unknown source"),
        ("1 12 1 0.5 -1 model", "relevance 1 does not fit source model"),
        ("1 12 -1 0.5 -1 human", "relevance -1 does not fit source human"),
    ],
)
def test_bad_probabilistic_lines_name_file_line_and_problem(
    world, tmp_path, line, message
):
    path = tmp_path / "bad.prob"
    path.write_text(f"1 1 -1 0.25 -1 model\n{line}\n")
    with pytest.raises(ImportFormatError, match=re.escape(message)) as info:
        qrels_import(path=path, collection=world.collection, name="bad")
    assert f"{path}:2" in str(info.value)
    assert not Qrels.objects.filter(name="bad").exists()


def test_inferred_and_merged_follow_the_chosen_rule_and_round_trip(
    world, job, tmp_path
):
    rule = DecisionRule(kind="probability", threshold=0.5)
    export = qrels_export(
        collection=world.collection, kind="merged", job=job, rule=rule
    )
    path = tmp_path / "merged.qrels"
    export.write(path)
    qrels_import(path=path, collection=world.collection, name="merged")
    imported = {
        (e.topic.qid, e.document.docno): e.relevance
        for e in Qrels.objects.get(name="merged").entries.select_related(
            "topic", "document"
        )
    }
    probs = {
        (r[0], r[1]): (r[2], float(r[3])) for r in _lines(probabilistic_export(job=job))
    }
    assert imported.keys() == probs.keys()
    for key, (rel, p) in probs.items():
        want = int(rel) if rel != "-1" else int(p >= 0.5)
        assert imported[key] == want
    model = export.provenance["model"]
    assert model["features"] == list(relevance_features.FEATURE_NAMES)
    assert export.provenance["rule"] == {"kind": "probability", "threshold": 0.5}


def test_export_command_writes_probabilistic_qrels(world, job, tmp_path):
    out = tmp_path / "p.qrels"
    call_command(
        "export_qrels", "--collection", world.collection.name, "--kind",
        "probabilistic", "--job", str(job.pk), "-o", str(out), stderr=io.StringIO(),
    )  # fmt: skip
    assert out.read_text() == probabilistic_export(job=job).text()
    side = json.loads((tmp_path / "p.qrels.provenance.json").read_text())
    assert side["job"]["id"] == job.pk
    err = io.StringIO()
    call_command(
        "export_qrels", "--collection", world.collection.name, "--kind", "inferred",
        "--job", str(job.pk), "--rule", "expected-f1", "-o", str(tmp_path / "e"),
        stderr=err,
    )  # fmt: skip
    side = json.loads((tmp_path / "e.provenance.json").read_text())
    assert side["rule"] == {"kind": "expected_f1"}
    with pytest.raises(CommandError, match="expected p:X, expected-f1"):
        call_command(
            "export_qrels", "--collection", world.collection.name, "--kind",
            "inferred", "--job", str(job.pk), "--rule", "best",
        )  # fmt: skip


def test_evaluate_gives_expected_measures_from_a_file_or_the_job(world, job, tmp_path):
    path = tmp_path / "job.prob"
    probabilistic_export(job=job).write(path)
    run = tmp_path / "run.txt"
    docs = [d.docno for d in world.pooled["3"]][::-1]
    run.write_text(
        "".join(f"3 Q0 {d} {i + 1} {100 - i} mine\n" for i, d in enumerate(docs))
    )
    by_file, by_job = io.StringIO(), io.StringIO()
    call_command("evaluate", "--expected", str(path), str(run), stdout=by_file)
    call_command("evaluate", "--job", str(job.pk), str(run), stdout=by_job)
    assert by_file.getvalue() == by_job.getvalue()
    values = {
        (m, t): float(v)
        for m, t, v in (line.split("\t") for line in by_file.getvalue().splitlines())
    }
    probs: dict[str, dict[str, float]] = {}
    for qid, docno, _, p, _, _ in _lines(probabilistic_export(job=job)):
        probs.setdefault(qid, {})[docno] = float(p)
    scores = {"3": {d: 100.0 - i for i, d in enumerate(docs)}}
    want = run_expected(probs, scores)
    assert values[("EAP", "3")] == pytest.approx(want.per_topic["3"]["EAP"])
    assert values[("EAP", "all")] == pytest.approx(want.mean["EAP"])
    assert values[("EP@10", "4")] == 0.0  # the run does not answer topic 4
    with pytest.raises(CommandError, match="no matching job 999999"):
        call_command("evaluate", "--job", "999999", str(run))


def test_match_command_refits_and_warns_about_topics_without_nuggets(world, job):
    out = io.StringIO()
    call_command("match", "--fit", str(job.pk), stdout=out)
    assert f"job {job.pk}: fitted on 28 judged documents" in out.getvalue()
    Nugget.objects.filter(topic=world.topics[1]).delete()
    err = io.StringIO()
    call_command(
        "match", "--collection", world.collection.name, "--pool", world.pool.name,
        stdout=io.StringIO(), stderr=err,
    )  # fmt: skip
    assert "warning: topics 4 have no nuggets" in err.getvalue()
