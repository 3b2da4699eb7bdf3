"""Fitting the decision rule on a job's held-out judged documents (``rule_fit``).

Expected thresholds come from an independent reference: the matcher run directly on
each judged document (without the document's own nuggets when it is a nugget's
source) and a brute-force search of every candidate threshold.
"""

from __future__ import annotations

import io
import json
from fractions import Fraction

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from matcher import MatchOptions, TopicMatcher
from nuggets_app.inference.services.matching import job_nugget_specs
from nuggets_app.inference.services.rule_estimates import rule_estimate
from nuggets_app.inference.services.rule_fitting import rule_fit
from nuggets_app.learning.thresholds import FitError
from nuggets_app.models import Judgment, MatchJob, MatchResult, Nugget
from tests.factories import (
    CollectionFactory,
    DocumentFactory,
    JudgmentFactory,
    NuggetFactory,
    TopicFactory,
)
from tests.integration.worlds.cranfield_pool import cranfield_world, pool_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(shared_data, assessor):
    return cranfield_world(
        shared_data, assessor, per_topic=30, nuggets_per_topic=4, judge=20
    )


@pytest.fixture
def job(world, settings):
    return pool_job(world, settings, chunk_size=7)


def _reference_pairs(world, job, *, leave_out: bool) -> dict[str, list]:
    """(score, relevant?) of every judged document, scored by the matcher itself."""
    pairs: dict[str, list] = {}
    for topic in world.topics:
        specs = job_nugget_specs(job, topic.pk)
        source_of = dict(
            Nugget.objects.filter(topic=topic).values_list("pk", "document_id")
        )
        docs = {d.pk: d for d in world.pooled[topic.qid]}
        for j in Judgment.objects.filter(topic=topic):
            own = {str(n) for n, d in source_of.items() if d == j.document_id}
            if own and not leave_out:
                continue
            kept = [s for s in specs if s.id not in own]
            score = 0.0
            if kept:
                matcher = TopicMatcher(kept, MatchOptions(lam=job.lam))
                score = matcher.score(docs[j.document_id].text).score
            pairs.setdefault(topic.qid, []).append((score, j.relevance >= 1))
    return pairs


def _brute_force(pairs) -> float:
    """The candidate threshold with the best F1, ties to the higher threshold."""
    relevant = sum(r for _, r in pairs)
    best = None
    for t in sorted({s for s, _ in pairs if s > 0}):
        tp = sum(1 for s, r in pairs if r and s >= t)
        fp = sum(1 for s, r in pairs if not r and s >= t)
        f1 = Fraction(2 * tp, 2 * tp + (relevant - tp) + fp)
        if best is None or f1 >= best[0]:
            best = (f1, t)
    return best[1]


def test_the_fitted_threshold_is_the_best_f1_of_held_out_documents(world, job):
    pairs = _reference_pairs(world, job, leave_out=True)
    pooled = [p for qid in sorted(pairs) for p in pairs[qid]]
    # Sources scored against their own nuggets would sit near 1: held out, they do not.
    assert sum(r for _, r in pooled) >= 4
    rule = rule_fit(job=job)
    assert rule.kind == "threshold"
    assert rule.threshold == _brute_force(pooled)
    assert rule.per_topic == {}


def test_sources_can_be_excluded_instead_of_rescored(world, job):
    pairs = _reference_pairs(world, job, leave_out=False)
    pooled = [p for qid in sorted(pairs) for p in pairs[qid]]
    rule = rule_fit(job=job, sources="exclude")
    assert rule.threshold == _brute_force(pooled)


def test_per_topic_thresholds_are_fitted_on_each_topic(world, job):
    pairs = _reference_pairs(world, job, leave_out=True)
    rule = rule_fit(job=job, scope="per-topic")
    pooled = [p for qid in sorted(pairs) for p in pairs[qid]]
    assert rule.threshold == _brute_force(pooled)
    for qid, topic_pairs in pairs.items():
        if sum(r for _, r in topic_pairs) >= 2:
            assert rule.per_topic[qid] == _brute_force(topic_pairs)
        else:
            assert qid not in rule.per_topic


@pytest.fixture
def hand_job(assessor, other_assessor):
    """Six judged results with chosen scores and one nugget from another document: F1
    by hand is 0.9 -> 1/2, 0.8 -> 2/5, 0.7 -> 2/3, 0.4 -> 6/7, 0.2 -> 3/4, 0.1 -> 2/3.
    (The nugget makes the topic decidable by the paper rule.)"""
    collection = CollectionFactory()
    topic = TopicFactory(collection=collection, qid="7")
    job = MatchJob.objects.create(collection=collection, status="done")
    job.topics.add(topic)
    NuggetFactory(
        topic=topic, assessor=assessor, document=DocumentFactory(collection=collection)
    )
    for score, grade in [(0.9, 1), (0.8, 0), (0.7, 2), (0.4, 1), (0.2, 0), (0.1, 0)]:
        doc = DocumentFactory(collection=collection)
        MatchResult.objects.create(job=job, topic=topic, document=doc, score=score)
        JudgmentFactory(topic=topic, document=doc, assessor=assessor, relevance=grade)
    return job


def test_a_hand_computed_fit_and_its_estimate(hand_job):
    rule = rule_fit(job=hand_job)
    assert rule.threshold == 0.4
    estimate = rule_estimate(job=hand_job, rule=rule)["all"]
    assert (estimate.tp, estimate.fp, estimate.fn, estimate.tn) == (3, 1, 0, 2)
    assert estimate.precision == 0.75
    assert estimate.recall == 1.0


def test_the_highest_grade_counts_unless_assessors_are_named(
    hand_job, assessor, other_assessor
):
    # other_assessor finds the 0.8 and 0.2 documents relevant: with the highest grade
    # all five documents scoring >= 0.2 are relevant, so F1(0.2) = 1.
    for score in (0.8, 0.2):
        result = MatchResult.objects.get(job=hand_job, score=score)
        JudgmentFactory(
            topic=result.topic,
            document=result.document,
            assessor=other_assessor,
            relevance=1,
        )
    assert rule_fit(job=hand_job).threshold == 0.2
    assert rule_fit(job=hand_job, assessors=[assessor.pk]).threshold == 0.4
    # With grade 2 as the relevance level only the 0.7 document is relevant: F1 1.
    assert rule_fit(job=hand_job, relevance_level=2).threshold == 0.7


def test_a_beta_weights_recall_or_precision(hand_job):
    # beta 1/4: F(0.9) = 17/19 beats F(0.4) = 51/67.
    assert rule_fit(job=hand_job, objective="fbeta", beta=0.25).threshold == 0.9
    with pytest.raises(FitError, match="beta = 1"):
        rule_fit(job=hand_job, beta=2.0)
    with pytest.raises(FitError, match="objective"):
        rule_fit(job=hand_job, objective="map")


def test_nothing_to_fit_on_is_an_error(hand_job):
    Judgment.objects.filter(relevance__gt=0).update(relevance=0)
    with pytest.raises(FitError, match="no judged relevant held-out document"):
        rule_fit(job=hand_job)


def test_export_command_infers_with_the_fitted_threshold(hand_job, tmp_path):
    out = tmp_path / "inferred.qrels"
    err = io.StringIO()
    call_command(
        "export_qrels", "--collection", hand_job.collection.name, "--kind", "inferred",
        "--job", str(hand_job.pk), "--fit", "f1", "-o", str(out), stderr=err,
    )  # fmt: skip
    scores = dict(
        MatchResult.objects.filter(job=hand_job).values_list("document__docno", "score")
    )
    rows = [line.split() for line in out.read_text().splitlines()]
    # Every result is judged here: inferred qrels give the fitted rule's own call on
    # each (the person's grade beside it in the sidecar); the rule is named there.
    grades = dict(
        Judgment.objects.filter(topic__match_jobs=hand_job).values_list(
            "document__docno", "relevance"
        )
    )
    level = max(int(r[3]) for r in rows)  # the job's relevance level
    assert level > 0
    assert {r[2]: int(r[3]) for r in rows} == {
        d: level if s >= 0.4 else 0 for d, s in scores.items()
    }
    side = json.loads(out.with_name(out.name + ".provenance.json").read_text())
    assert {x["docno"]: x["person"]["rel"] for x in side["lines"]} == {
        d: grades[d] for d in scores
    }
    assert side["rule"]["threshold"] == 0.4
    assert "score >= 0.4; on the judged documents precision 0.750, recall 1.000" in (
        err.getvalue()
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--fit", "f1", "--threshold", "0.3"], "not allowed with argument"),
        (["--fit", "g1"], "expected fB or fB:per-topic"),
        (["--fit", "f1", "--thresholds", "t.txt"], "exclude each other"),
    ],
)
def test_export_command_refuses_a_bad_fit(hand_job, tmp_path, extra, message):
    with pytest.raises(CommandError, match=message):
        call_command(
            "export_qrels", "--collection", hand_job.collection.name,
            "--kind", "inferred", "--job", str(hand_job.pk), *extra,
            "-o", str(tmp_path / "x"),
        )  # fmt: skip
    assert not (tmp_path / "x").exists()


def test_export_command_fit_needs_a_job(hand_job):
    with pytest.raises(
        CommandError, match=r"a fitted rule needs a matching job.*\(--job\)"
    ):
        call_command(
            "export_qrels", "--collection", hand_job.collection.name,
            "--kind", "inferred", "--fit", "f1",
        )  # fmt: skip


def test_the_topic_page_suggests_the_fitted_threshold(staff_client, world, job):
    pairs = _reference_pairs(world, job, leave_out=True)
    topic = world.topics[0]
    url = reverse("job-topic", args=[job.pk, topic.qid])
    page = staff_client.get(url).content.decode()
    assert "Suggest a threshold (best F1 on held-out judged documents)" in page
    suggested = staff_client.get(url, {"suggest": "f1"})
    assert suggested.status_code == 200
    form = suggested.context["rule_form"]
    assert form.is_valid()
    assert form.cleaned_data["threshold"] == _brute_force(pairs[topic.qid])
    assert suggested.context["rule"].threshold == _brute_force(pairs[topic.qid])
    assert "this topic&#x27;s held-out judged documents" in suggested.content.decode()


def test_the_topic_page_says_when_nothing_can_be_suggested(staff_client, hand_job):
    Judgment.objects.filter(relevance__gt=0).update(relevance=0)
    topic = hand_job.topics.get()
    response = staff_client.get(
        reverse("job-topic", args=[hand_job.pk, topic.qid]), {"suggest": "f1"}
    )
    assert "No threshold can be suggested: no judged relevant" in (
        response.content.decode()
    )


def test_an_assessor_cannot_ask_for_a_suggestion(assessor_client, hand_job):
    topic = hand_job.topics.get()
    response = assessor_client.get(
        reverse("job-topic", args=[hand_job.pk, topic.qid]), {"suggest": "f1"}
    )
    assert response.status_code in (403, 404)
