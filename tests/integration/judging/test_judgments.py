"""judgment_record and judgment_time_add on real Cranfield documents."""

import threading

import pytest
from django.db import connection

from nuggets_app.judging.services.judgments import (
    JudgingError,
    NotAssigned,
    judgment_record,
    judgment_time_add,
)
from nuggets_app.models import Judgment
from tests.integration.worlds.judging import build_world


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def test_a_judgment_is_recorded_then_changed_in_one_row(world, assessor):
    doc = world.docs["184"]
    judgment_record(
        assessor=assessor,
        topic=world.topic,
        document=doc,
        relevance=2,
        active_seconds_delta=12.5,
    )
    judgment_record(
        assessor=assessor,
        topic=world.topic,
        document=doc,
        relevance=0,
        active_seconds_delta=3,
    )
    row = Judgment.objects.get()
    assert (row.relevance, row.active_seconds) == (0, 15.5)


def test_heartbeats_add_time_without_changing_the_relevance(world, assessor):
    doc = world.docs["29"]
    judgment_time_add(
        assessor=assessor, topic=world.topic, document=doc, active_seconds_delta=4
    )
    assert Judgment.objects.get().relevance is None
    judgment_record(assessor=assessor, topic=world.topic, document=doc, relevance=1)
    judgment_time_add(
        assessor=assessor, topic=world.topic, document=doc, active_seconds_delta=6
    )
    row = Judgment.objects.get()
    assert (row.relevance, row.active_seconds) == (1, 10.0)


def test_it_rejects_a_grade_outside_the_collections_scale(world, assessor):
    with pytest.raises(JudgingError, match=r"relevance 3 is not one of \[0, 1, 2\]"):
        judgment_record(
            assessor=assessor,
            topic=world.topic,
            document=world.docs["184"],
            relevance=3,
        )
    assert not Judgment.objects.exists()


@pytest.mark.parametrize("delta", [-1, 601])
def test_it_rejects_implausible_time_deltas(world, assessor, delta):
    with pytest.raises(JudgingError, match="active_seconds_delta"):
        judgment_time_add(
            assessor=assessor,
            topic=world.topic,
            document=world.docs["184"],
            active_seconds_delta=delta,
        )
    assert not Judgment.objects.exists()


def test_it_refuses_a_topic_the_assessor_was_not_assigned(
    world, assessor, other_assessor
):
    # Bob is assigned topic 2 only; document 184 is in topic 1's sample.
    with pytest.raises(NotAssigned, match="not assigned to you"):
        judgment_record(
            assessor=other_assessor,
            topic=world.topic,
            document=world.docs["184"],
            relevance=1,
        )
    # Document 184 is not in topic 2's sample, even for its assessor.
    with pytest.raises(NotAssigned):
        judgment_record(
            assessor=other_assessor,
            topic=world.other_topic,
            document=world.docs["184"],
            relevance=1,
        )
    assert not Judgment.objects.exists()


def test_a_slot_that_does_not_cover_the_document_is_checked_in_the_database(
    world, assessor, other_assessor, django_assert_max_num_queries
):
    """The judging views pass the assignment and queue item they read as proof; a
    slot that proves nothing about this (assessor, topic, document) is not trusted."""
    own = world.assignment
    item = own.sample.documents.get(topic=world.topic, document=world.docs["184"])
    with django_assert_max_num_queries(10) as counted:
        judgment_record(
            assessor=assessor,
            topic=world.topic,
            document=world.docs["184"],
            relevance=1,
            slot=(own, item),
        )
    assert not any("sampledocument" in q["sql"] for q in counted.captured_queries)
    # Alice's slot does not let Bob judge her topic, nor Alice a topic not hers.
    for who, topic in ((other_assessor, world.topic), (assessor, world.other_topic)):
        with pytest.raises(NotAssigned):
            judgment_record(
                assessor=who,
                topic=topic,
                document=world.docs["184"],
                relevance=1,
                slot=(own, item),
            )
    assert Judgment.objects.count() == 1


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="concurrency needs PostgreSQL"
)
@pytest.mark.django_db(transaction=True)
def test_concurrent_saves_of_one_judgment_converge_on_one_row(
    shared_data, assessor, other_assessor
):
    world = build_world(shared_data, assessor, other_assessor)
    barrier, errors = threading.Barrier(6), []

    def save(grade: int) -> None:
        try:
            barrier.wait()
            for _ in range(10):
                judgment_record(
                    assessor=assessor,
                    topic=world.topic,
                    document=world.docs["31"],
                    relevance=grade,
                    active_seconds_delta=1,
                )
        except Exception as exc:  # collected: the assertion below names it
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=save, args=(i % 3,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    row = Judgment.objects.get()
    assert row.relevance in {0, 1, 2}
    assert row.active_seconds == 60.0
