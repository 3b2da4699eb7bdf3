"""The job topic page's figures, kept per the job's inputs, and the reads under them
that no longer load the whole job: rules on one topic, p with judgments applied, the
best unjudged documents by p, the model row without its blobs."""

from __future__ import annotations

import pytest

from nuggets_app.evaluation import selectors as evaluation_selectors
from nuggets_app.evaluation.services import job_topic
from nuggets_app.evaluation.services.outside_pool import job_calibration_shown
from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.job_model import job_model_fit, job_probabilities
from nuggets_app.inference.services.rule_application import rule_apply
from nuggets_app.judging.selectors import human_grades
from nuggets_app.judging.services.judgments import judgment_correct
from nuggets_app.models import JobInference, JobTopicProbabilities, Judgment
from tests.integration.worlds.cranfield_pool import cranfield_world, pool_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(shared_data, assessor):
    return cranfield_world(
        shared_data, assessor, qids=("3", "4", "8"), per_topic=24, judge=12
    )


@pytest.fixture
def job(world, settings):
    found = pool_job(world, settings, chunk_size=10)
    job_model_fit(job=found)
    return found


@pytest.mark.parametrize(
    "rule",
    [DecisionRule(threshold=0.3), DecisionRule(kind="probability", threshold=0.5)],
    ids=["score", "model"],
)
def test_a_rule_on_one_topic_decides_as_on_the_whole_job(world, job, rule):
    whole = rule_apply(job=job, rule=rule)
    for topic in world.topics:
        assert rule_apply(job=job, rule=rule, topics=[topic]) == {
            topic.pk: whole[topic.pk]
        }


def test_judgments_override_p_of_exactly_the_judged_documents(world, job):
    raw = job_probabilities(job=job, override=False)
    merged = job_probabilities(job=job)
    grades = human_grades(raw)
    for topic_id, (docs, p) in merged.items():
        for doc_id, value, model in zip(
            docs.tolist(), p.tolist(), raw[topic_id][1].tolist(), strict=True
        ):
            grade = grades.get((topic_id, doc_id))
            expected = model if grade is None else float(grade >= 1)
            assert value == expected


def test_the_topic_model_view_lists_the_best_unjudged_by_p(world, job):
    topic = world.topics[0]
    docs, p = job_probabilities(job=job, override=False)[topic.pk]
    judged = {d for _, d in human_grades([topic.pk])}
    expected = sorted(
        (
            (d, v)
            for d, v in zip(docs.tolist(), p.tolist(), strict=True)
            if d not in judged
        ),
        key=lambda pair: (-pair[1], pair[0]),
    )[:5]
    view = evaluation_selectors.topic_model_view(job=job, topic=topic, limit=5)
    assert view.unjudged == expected
    assert view.p_of([d for d, _ in expected]) == dict(expected)


def test_topic_figures_are_kept_until_a_judgment_changes(world, job, monkeypatch):
    computed = []
    figures = job_topic._figures

    def counting(*args):
        computed.append(args[1].qid)
        return figures(*args)

    monkeypatch.setattr(job_topic, "_figures", counting)
    topic = world.topics[0]
    rule = DecisionRule(threshold=0.3)
    first = job_topic.job_topic_figures(job=job, topic=topic, rule=rule)
    again = job_topic.job_topic_figures(job=job, topic=topic, rule=rule)
    assert computed == [topic.qid]
    assert again.estimate == first.estimate
    assert again.top == first.top
    # Another rule is another figure.
    job_topic.job_topic_figures(job=job, topic=topic, rule=DecisionRule(threshold=0.6))
    assert len(computed) == 2
    # A changed judgment gives new figures: the relevant count moves by one.
    judged = Judgment.objects.filter(topic=topic, relevance__isnull=False).first()
    flipped = 0 if judged.relevance >= 1 else 2
    judgment_correct(
        actor=judged.assessor,
        assessor=judged.assessor,
        topic=topic,
        document=judged.document,
        relevance=flipped,
    )
    after = job_topic.job_topic_figures(job=job, topic=topic, rule=rule)
    assert len(computed) == 3
    moved = after.groups["relevant"] - first.groups["relevant"]
    assert moved == (1 if flipped else -1)


def test_the_calibration_is_kept_per_the_job_inputs(world, job, monkeypatch):
    from nuggets_app.evaluation.services import outside_pool

    computed = []
    calibration = outside_pool._job_calibration

    def counting(found):
        computed.append(found.pk)
        return calibration(found)

    monkeypatch.setattr(outside_pool, "_job_calibration", counting)
    first = job_calibration_shown(job=job)
    assert job_calibration_shown(job=job) == first
    assert computed == [job.pk]


def test_the_model_row_is_read_without_its_statistics_until_asked(job):
    row = JobInference.objects.get(job=job)
    assert "stats" in row.get_deferred_fields()
    assert row.stats is not None  # still there when read by name


def test_the_probabilities_are_a_row_per_topic_read_alone(world, job):
    stored = dict(
        JobTopicProbabilities.objects.filter(job=job).values_list(
            "topic_id", "probabilities"
        )
    )
    assert set(stored) == {t.pk for t in world.topics}
    whole = job_probabilities(job=job, override=False)
    for topic in world.topics:
        alone = job_probabilities(job=job, override=False, topics=[topic.pk])
        assert list(alone) == [topic.pk]
        docs, p = alone[topic.pk]
        assert docs.tolist() == whole[topic.pk][0].tolist()
        assert p.tolist() == whole[topic.pk][1].tolist()
        assert len(bytes(stored[topic.pk])) == 16 + 16 * len(docs)
        assert ((p >= 0) & (p <= 1)).all()
