"""assignment_create: round robin with overlap, idempotent, refusing bad requests."""

import pytest

from nuggets_app.models import Assignment
from nuggets_app.pooling.services.assignments import (
    AssignmentError,
    assignment_create,
    assignment_plan,
)
from nuggets_app.pooling.services.pools import pool_build
from nuggets_app.pooling.services.samples import sample_draw
from tests import factories as f
from tests.factories import TopicFactory, UserFactory
from tests.integration.pooling.test_pools import make_runs

pytestmark = pytest.mark.django_db


@pytest.fixture
def sample():
    collection, runs = make_runs(
        {qid: {"r1": list("abcd"), "r2": list("cae")} for qid in ("1", "2", "10", "3")}
    )
    pool = pool_build(collection=collection, runs=runs, depth=10, name="p")
    return sample_draw(pool=pool, size=2, method="statap", seed=1, name="s")


def test_the_plan_is_round_robin_with_overlap():
    plan = assignment_plan(qids=["1", "2", "3"], assessors=["x", "y", "z"], overlap=2)
    assert plan == [
        ("1", "x"),
        ("1", "y"),
        ("2", "z"),
        ("2", "x"),
        ("3", "y"),
        ("3", "z"),
    ]


def test_every_sampled_topic_goes_to_k_assessors_and_twice_changes_nothing(sample):
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    made = assignment_create(sample=sample, assessors=[alice, bob], overlap=1)
    by_topic = {a.topic.qid: a.assessor.username for a in made}
    # Topics in numeric qid order: 1, 2, 3, 10.
    assert by_topic == {"1": "alice", "2": "bob", "3": "alice", "10": "bob"}
    assignment_create(sample=sample, assessors=[alice, bob], overlap=1)
    assert Assignment.objects.filter(sample=sample).count() == 4
    both = sample.pool.collection.topics.filter(qid__in=["1", "2"])
    assignment_create(
        sample=sample, assessors=[alice, bob], topics=list(both), overlap=2
    )
    assert Assignment.objects.filter(sample=sample).count() == 6


def test_bad_requests_are_refused(sample):
    alice = UserFactory(username="alice")
    with pytest.raises(AssignmentError, match="overlap must be between 1 and"):
        assignment_create(sample=sample, assessors=[alice], overlap=2)
    stray = TopicFactory(collection=sample.pool.collection, qid="99")
    with pytest.raises(AssignmentError, match="without documents in sample s: 99"):
        assignment_create(sample=sample, assessors=[alice], topics=[stray])
    assert not Assignment.objects.exists()


def test_simulated_assessors_cannot_be_assigned_whatever_their_name(db):
    from nuggets_app.pooling.selectors import assessor_choices
    from nuggets_app.pooling.services.simulated_assessors import simulated_user_mark

    sample = f.SampleFactory()
    f.SampleDocumentFactory(
        sample=sample, topic=f.TopicFactory(collection=sample.pool.collection)
    )
    simulated = simulated_user_mark(f.UserFactory(username="carol"))
    person = f.UserFactory(username="dave")
    assert list(assessor_choices()) == [person]
    with pytest.raises(AssignmentError, match=r"simulated assessors.*carol"):
        assignment_create(sample=sample, assessors=[person, simulated])


def test_several_assessors_on_a_topic_stop_seeing_each_others_nuggets(client):
    from django.urls import reverse

    sample = f.SampleFactory()
    topic = f.TopicFactory(collection=sample.pool.collection)
    document = f.DocumentFactory(collection=sample.pool.collection)
    f.SampleDocumentFactory(sample=sample, topic=topic, document=document, order=1)
    alice, bob = f.UserFactory(username="alice"), f.UserFactory(username="bob")
    f.NuggetFactory(topic=topic, document=document, assessor=alice)
    (mine,) = assignment_create(sample=sample, assessors=[bob], overlap=1)
    client.force_login(bob)
    url = reverse("judge-data", args=[mine.pk, 1])
    assert len(client.get(url).json()["nuggets"]) == 1  # shared by default

    assignment_create(sample=sample, assessors=[alice, bob], overlap=2)
    sample.refresh_from_db()
    assert not sample.nuggets_shared
    assert client.get(url).json()["nuggets"] == []
