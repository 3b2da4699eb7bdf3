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
