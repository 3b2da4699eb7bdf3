"""Re-scoring from stored evidence, decision rules, histograms and the TP/FP curve."""

import pytest

from matcher import MatchOptions, TopicMatcher
from nuggets_app.inference.selectors import score_histograms, topic_scores, tp_fp_curve
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.matching import (
    MatchJobError,
    job_nugget_specs,
    match_job_rescore,
)
from nuggets_app.inference.services.rule_estimates import rule_estimate
from nuggets_app.models import Judgment, MatchJob, MatchResult
from tests.factories import CollectionFactory, DocumentFactory, TopicFactory
from tests.integration.worlds.cranfield_pool import cranfield_world, pool_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(shared_data, assessor):
    return cranfield_world(shared_data, assessor, per_topic=40, nuggets_per_topic=4)


@pytest.fixture
def job(world, settings):
    return pool_job(world, settings, chunk_size=9)


@pytest.mark.parametrize("lam", [0.2, 0.8, 1.0])
def test_rescoring_equals_matching_again_with_the_new_lambda(world, job, lam):
    summary = match_job_rescore(job=job, lam=lam)
    assert summary.results == 80
    job.refresh_from_db()
    assert job.lam == lam
    rows = {(r.topic_id, r.document_id): r for r in MatchResult.objects.filter(job=job)}
    changed_nugget = 0
    for topic in world.topics:
        matcher = TopicMatcher(job_nugget_specs(job, topic.pk), MatchOptions(lam=lam))
        for doc in world.pooled[topic.qid]:
            match = matcher.score(doc.text)
            row = rows[(topic.pk, doc.pk)]
            assert row.score == match.score  # bit for bit
            assert row.nugget_id == (int(match.nugget) if match.nugget else None)
            if row.spans:
                assert row.spans == [list(s) for s in match.spans]
            else:
                changed_nugget += match.score > 0
    assert summary.changed >= changed_nugget


def test_rescoring_refuses_a_bad_lambda(job):
    with pytest.raises(MatchJobError, match=r"lambda must be in \(0, 1\], got 0"):
        match_job_rescore(job=job, lam=0)


def test_rule_estimate_counts_the_judged_documents(world, job):
    rule = DecisionRule(kind="threshold", threshold=0.25)
    estimates = rule_estimate(job=job, rule=rule)
    want = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    judged = {
        (j.topic_id, j.document_id): j.relevance
        for j in Judgment.objects.filter(topic__in=world.topics)
    }
    for topic in world.topics:
        matcher = TopicMatcher(job_nugget_specs(job, topic.pk))
        for doc in world.pooled[topic.qid]:
            grade = judged.get((topic.pk, doc.pk))
            if grade is None:
                continue
            inferred = matcher.score(doc.text).score >= 0.25
            key = (
                ("tp" if inferred else "fn") if grade else ("fp" if inferred else "tn")
            )
            want[key] += 1
    overall = estimates["all"]
    assert {k: getattr(overall, k) for k in want} == want
    assert overall.judged == 24
    assert overall.precision == pytest.approx(want["tp"] / (want["tp"] + want["fp"]))
    assert overall.recall == pytest.approx(want["tp"] / (want["tp"] + want["fn"]))
    assert set(estimates) == {"all", "1", "2"}


def _scored_topic(scores_rel, scores_nonrel, unjudged=()):
    """A finished job whose results have the given scores (for exact vectors)."""
    from tests.factories import UserFactory

    collection = CollectionFactory()
    topic = TopicFactory(collection=collection)
    judge = UserFactory()
    job = MatchJob.objects.create(collection=collection, status="done")
    job.topics.set([topic])
    for grade, scores in ((1, scores_rel), (0, scores_nonrel), (None, unjudged)):
        for score in scores:
            doc = DocumentFactory(collection=collection)
            MatchResult.objects.create(job=job, topic=topic, document=doc, score=score)
            if grade is not None:
                Judgment.objects.create(
                    topic=topic, document=doc, assessor=judge, relevance=grade
                )
    return job, topic


def test_histograms_match_the_specification_example():
    # docs/reference/algorithms.md section 6: R and NR scores over 16, four bins.
    rel = [16, 15, 13, 12, 9, 10, 5]
    nonrel = [0, 1, 2, 5, 6, 9, 10, 11, 14]
    job, topic = _scored_topic([s / 16 for s in rel], [s / 16 for s in nonrel], [0.99])
    hist = score_histograms(topic_scores(job, topic), bins=4)
    assert hist["edges"] == [0, 0.25, 0.5, 0.75, 1]
    assert hist["counts"] == {
        "relevant": [0, 1, 2, 4],
        "nonrelevant": [3, 2, 3, 1],
        "unjudged": [0, 0, 0, 1],
    }


def test_tp_fp_curve_walks_down_the_distinct_scores():
    job, topic = _scored_topic([0.9, 0.5, 0.5], [0.7, 0.5, 0.1], [1.0])
    curve = tp_fp_curve(topic_scores(job, topic))
    assert curve == [(0.9, 1, 0), (0.7, 1, 1), (0.5, 3, 2), (0.1, 3, 3)]
