"""Evaluation with uncertainty: expected measures beside statAP on the runs page,
compare_qrels statMAP against EAP, and the verification queue's p near 0.5 with its
calibration report."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from assessor_ui.templatetags.numbers import number
from nuggets_app.evaluation.selectors import job_probability_qrels, sample_prels
from nuggets_app.evaluation.services.verification import (
    verification_queue_create,
    verification_report,
)
from nuggets_app.inference.services import job_model as relevance
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.exports import prels_export, probabilistic_export
from nuggets_app.ir.expected import run_expected
from nuggets_app.ir.ranking import ranking_compare
from nuggets_app.ir.statap import statap_evaluate
from nuggets_app.models import Judgment

pytestmark = pytest.mark.django_db


def _expected_statap(world):
    probs = job_probability_qrels(world.job)
    prels = sample_prels(world.sample)
    eap = {n: run_expected(probs, r).mean["EAP"] for n, r in world.file_runs.items()}
    stat = {
        n: statap_evaluate(prels, r).summary.stat_map
        for n, r in world.file_runs.items()
    }
    return eap, stat


def test_the_runs_page_shows_expected_measures_beside_statap(
    researcher, client, fitted
):
    world = fitted
    client.force_login(researcher)
    url = reverse("evaluation-page", args=[world.collection.pk, "runs"])
    page = client.get(
        url, {"sample": world.sample.pk, "expected": world.job.pk, "qrels": "human"}
    )
    assert page.status_code == 200
    assert "Expected measures under the job's relevance model" in page.text
    table = page.context["tables"]["expected"]
    assert table["columns"][:4] == ("run", "EAP", "EP@10", "EnDCG@10")
    assert "statMAP" in table["columns"]
    assert "rank_change" in table["columns"]
    eap, stat = _expected_statap(world)
    moves = ranking_compare(stat, eap).moves
    assert [row[0] for row in table["rows"]] == [m.run for m in moves]
    for row in table["rows"]:
        assert number(row[1]) == f"{eap[row[0]]:.4f}"
        assert number(row[4]) == f"{stat[row[0]]:.4f}"


def test_compare_qrels_flags_runs_ranked_differently_by_eap_and_statap(
    fitted, tmp_path
):
    world = fitted
    prels = tmp_path / "sample.prels"
    prels_export(sample=world.sample).write(prels)
    expected = tmp_path / "job.prob"
    probabilistic_export(job=world.job).write(expected)
    runs = []
    for name, scores in world.file_runs.items():
        path = tmp_path / f"{name}.run"
        path.write_text(
            "".join(
                f"{qid} Q0 {d} {i} {s!r} {name}\n"
                for qid in sorted(scores, key=int)
                for i, (d, s) in enumerate(
                    sorted(scores[qid].items(), key=lambda kv: (-kv[1], kv[0])), 1
                )
            )
        )
        runs.append(str(path))
    by_file, by_job = io.StringIO(), io.StringIO()
    call_command("compare_qrels", "--prels", str(prels), "--expected", str(expected),
                 *runs, stdout=by_file)  # fmt: skip
    call_command("compare_qrels", "--prels", str(prels), "--job", str(world.job.pk),
                 *runs, stdout=by_job)  # fmt: skip
    assert by_file.getvalue() == by_job.getvalue()
    lines = by_file.getvalue().splitlines()
    assert lines[0] == "measure\tstatMAP vs EAP"
    eap, stat = _expected_statap(world)
    moves = ranking_compare(stat, eap).moves
    rows = [line.split("\t") for line in lines[6:]]
    assert [r[0] for r in rows] == [m.run for m in moves]
    assert [int(r[5]) for r in rows] == [m.delta for m in moves]


def test_the_verification_queue_draws_p_near_half_and_reports_calibration(
    fitted, assessor
):
    world = fitted
    rule = DecisionRule(kind="probability", threshold=0.5)
    sample = verification_queue_create(
        job=world.job, rule=rule, relevant=2, nonrelevant=2, seed=3,
        assessors=[], uncertain=2,
    )  # fmt: skip
    p_model = {}
    columns = relevance.job_probabilities(job=world.job, override=False)
    for topic in world.topics.values():
        docs, p = columns[topic.pk]
        p_model[topic.qid] = dict(zip(docs.tolist(), p.tolist(), strict=True))
    judged = set(Judgment.objects.values_list("topic__qid", "document__docno"))
    docnos = {d.pk: d.docno for d in world.collection.documents.all()}
    for qid, record in sample.draws.items():
        strata = record["strata"]
        near = strata["uncertain"]["drawn"]
        population = {
            docnos[d]: v
            for d, v in p_model[qid].items()
            if (qid, docnos[d]) not in judged and docnos[d] in _pooled(world, qid)
        }
        closest = sorted(population, key=lambda d: (abs(population[d] - 0.5), d))
        assert near == sorted(closest[:2])
        others = set(strata["relevant"]["drawn"]) | set(strata["nonrelevant"]["drawn"])
        assert not others & set(near)
        assert strata["uncertain"]["fraction"] == 1.0
    # Judge every drawn document with the real qrels; the report's calibration is
    # the mean p and the observed rate over them.
    drawn = [
        (qid, d, label, info["p"][d])
        for qid, record in sample.draws.items()
        for label, info in record["strata"].items()
        for d in info["drawn"]
    ]
    docs = {d.docno: d for d in world.collection.documents.all()}
    for qid, docno, _, _ in drawn:
        Judgment.objects.create(
            topic=world.topics[qid], document=docs[docno], assessor=assessor,
            relevance=int(world.file_qrels.get(qid, {}).get(docno, 0) >= 1),
        )  # fmt: skip
    report = verification_report(sample=sample)
    overall = next(row for row in report.calibration if row[0] == "all")
    labels = [int(world.file_qrels.get(q, {}).get(d, 0) >= 1) for q, d, _, _ in drawn]
    ps = [p for *_, p in drawn]
    assert overall[1] == len(drawn)
    assert overall[2] == pytest.approx(sum(ps) / len(ps))
    assert overall[3] == pytest.approx(sum(labels) / len(labels))
    assert overall[4] == pytest.approx(
        sum((p - y) ** 2 for p, y in zip(ps, labels, strict=True)) / len(ps)
    )
    assert {row[0] for row in report.calibration} <= {
        "relevant",
        "nonrelevant",
        "uncertain",
        "all",
    }
    out = io.StringIO()
    call_command("verification_queue", "--report", "--job", str(world.job.pk),
                 "--name", sample.name, stdout=out)  # fmt: skip
    assert "stratum,judged,mean_p,observed_rate,brier" in out.getvalue()


def _pooled(world, qid: str) -> set[str]:
    from nuggets_app.models import PoolDocument

    return set(
        PoolDocument.objects.filter(
            pool=world.pool, topic=world.topics[qid]
        ).values_list("document__docno", flat=True)
    )
