"""aspect_create and the aspects imports keep, on real PostgreSQL."""

import threading
import uuid

import pytest
from django.db import connection

from nuggets_app.models import Topic
from nuggets_app.services.aspects import (
    MAX_ASPECT_LABEL_CHARS,
    DuplicateAspect,
    aspect_create,
)
from nuggets_app.services.judgments import JudgingError
from nuggets_app.services.nuggets import nugget_save
from tests.integration.judging_world import build_world

PHRASE = "thermo-aeroelastic similarity"


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def test_a_new_aspect_gets_the_next_free_number_and_its_author(world, assessor):
    aspect = aspect_create(
        user=assessor, topic=world.topic, text="  wind   tunnel\ttests "
    )
    stored = Topic.objects.get(pk=world.topic.pk).aspects
    assert (aspect["id"], aspect["text"]) == ("1", "wind tunnel tests")
    assert (aspect["source"], aspect["created_by"]) == ("assessor", "alice")
    assert stored[-1] == aspect
    assert [a["id"] for a in stored] == ["a1", "a2", "1"]
    second = aspect_create(user=assessor, topic=world.topic, text="flutter")
    assert second["id"] == "2"


def test_a_nugget_can_be_filed_under_the_new_aspect_at_once(world, assessor):
    aspect = aspect_create(user=assessor, topic=world.topic, text="heat transfer")
    doc = world.docs["184"]
    start = doc.text.index(PHRASE)
    nugget, _ = nugget_save(
        assessor=assessor,
        topic=world.topic,
        document=doc,
        start=start,
        end=start + len(PHRASE),
        text="similarity with heat transfer",
        keywords=[],
        grade=None,
        aspect=aspect["id"],
        client_uuid=uuid.uuid4(),
        span_text=PHRASE,
    )
    nugget.refresh_from_db()
    assert nugget.aspect == aspect["id"]


@pytest.mark.parametrize("label", ["Similarity LAWS", "A1", "similarity  laws"])
def test_a_label_the_topic_has_is_refused_and_names_the_aspect(
    world, other_assessor, label
):
    with pytest.raises(DuplicateAspect, match="already has the aspect 'a1'") as exc:
        aspect_create(user=other_assessor, topic=world.topic, text=label)
    assert exc.value.existing["id"] == "a1"
    assert len(Topic.objects.get(pk=world.topic.pk).aspects) == 2


@pytest.mark.parametrize(
    ("label", "message"),
    [
        (" \n ", "label is empty"),
        ("x" * (MAX_ASPECT_LABEL_CHARS + 1), f"longer than {MAX_ASPECT_LABEL_CHARS}"),
    ],
)
def test_an_empty_or_long_label_is_refused(world, assessor, label, message):
    with pytest.raises(JudgingError, match=message) as exc:
        aspect_create(user=assessor, topic=world.topic, text=label)
    assert exc.value.field == "aspect_text"
    assert len(Topic.objects.get(pk=world.topic.pk).aspects) == 2


def test_the_same_aspect_on_another_topic_is_its_own(world, assessor, other_assessor):
    aspect_create(user=assessor, topic=world.topic, text="flutter")
    other = aspect_create(user=other_assessor, topic=world.other_topic, text="flutter")
    assert other["id"] == "1"


@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="concurrency needs PostgreSQL"
)
@pytest.mark.django_db(transaction=True)
def test_concurrent_additions_all_keep_their_aspect(
    shared_data, assessor, other_assessor
):
    world = build_world(shared_data, assessor, other_assessor)
    barrier, errors = threading.Barrier(6), []

    def add(index: int) -> None:
        try:
            barrier.wait()
            for round_ in range(3):
                user = assessor if index % 2 else other_assessor
                topic = Topic.objects.get(pk=world.topic.pk)
                aspect_create(user=user, topic=topic, text=f"aspect {index}-{round_}")
        except Exception as exc:  # collected: the assertion below names it
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=add, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    aspects = Topic.objects.get(pk=world.topic.pk).aspects
    added = [a for a in aspects if a.get("source") == "assessor"]
    assert sorted(a["text"] for a in added) == sorted(
        f"aspect {i}-{r}" for i in range(6) for r in range(3)
    )
    assert sorted(int(a["id"]) for a in added) == list(range(1, 19))
