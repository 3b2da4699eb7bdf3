"""Readiness: which topics a rule can decide, read in a bounded number of queries,
and a merged export that reads the people's labels once."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from nuggets_app.inference.services.decision_rule import DecisionRule
from nuggets_app.inference.services.exports import qrels_export
from nuggets_app.inference.services.readiness import (
    NO_NUGGETS_REASON,
    rule_undecided_reasons,
    topics_unjudged,
    topics_without_nuggets,
)
from nuggets_app.models import Judgment, Nugget
from tests.integration.worlds.cranfield_pool import cranfield_world, pool_job

pytestmark = pytest.mark.django_db

RULE = DecisionRule(kind="threshold", threshold=0.3)


@pytest.fixture
def job(shared_data, assessor, settings):
    """Three topics: "1" judged with nuggets, "2" with nuggets nobody judged, "3"
    judged without nuggets."""
    world = cranfield_world(shared_data, assessor, qids=("1", "2", "3"), per_topic=8)
    job = pool_job(world, settings, chunk_size=10)
    Judgment.objects.filter(topic__qid="2").delete()
    Nugget.objects.filter(topic__qid="3").delete()
    return job


def _reads(queries, table: str) -> int:
    return sum(f'FROM "{table}"' in q["sql"] for q in queries)


def test_readiness_names_the_topics_and_their_reasons(job):
    assert [t.qid for t in topics_without_nuggets(job)] == ["3"]
    assert [t.qid for t in topics_unjudged(job)] == ["2"]
    assert rule_undecided_reasons(job, RULE) == {"3": NO_NUGGETS_REASON}
    two = [t.pk for t in job.topics.filter(qid__in=("1", "2"))]
    assert rule_undecided_reasons(job, RULE, topic_ids=two) == {}


def test_topics_without_nuggets_reads_the_nuggets_in_one_query(
    job, django_assert_num_queries
):
    # One query for the topics, one for their nuggets, whatever their number.
    with django_assert_num_queries(2):
        topics_without_nuggets(job)


def test_a_merged_export_reads_the_peoples_labels_once(job):
    collection = job.collection
    with CaptureQueriesContext(connection) as human:
        qrels_export(collection=collection, kind="human")
    with CaptureQueriesContext(connection) as merged:
        export = qrels_export(collection=collection, kind="merged", job=job, rule=RULE)
    assert export.provenance["undecided_topics"] == ["3"]
    # As many reads of the judgments as the human qrels: the labels, read once,
    # say both the lines and which topics are judged.
    judgments = "nuggets_app_judgment"
    assert _reads(merged.captured_queries, judgments) == _reads(
        human.captured_queries, judgments
    )


def test_a_merged_export_reads_labels_and_nuggets_alike_for_one_topic_or_three(job):
    collection = job.collection
    one = list(job.topics.filter(qid="1"))
    # A first export fills what is read once per process (the model's caches).
    qrels_export(collection=collection, kind="merged", job=job, rule=RULE)
    with CaptureQueriesContext(connection) as few:
        qrels_export(
            collection=collection, kind="merged", job=job, rule=RULE, topics=one
        )
    with CaptureQueriesContext(connection) as many:
        qrels_export(collection=collection, kind="merged", job=job, rule=RULE)
    # The inferred lines stream a topic at a time (memory, not queries, bounds a
    # large job); the people's labels and the nuggets are read once however many.
    for table in ("nuggets_app_judgment", "nuggets_app_nugget"):
        assert _reads(many.captured_queries, table) == _reads(
            few.captured_queries, table
        ), table
