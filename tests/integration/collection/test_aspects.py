"""aspect_create, and the aspects topic files and nugget banks give topics (real TREC
Web 2009 topics and RAG 2025 nuggets), on real PostgreSQL."""

import json
import threading
import uuid

import pytest
from django.db import connection

from nuggets_app.collection.services.aspects import (
    MAX_ASPECT_LABEL_CHARS,
    AspectError,
    DuplicateAspect,
    aspect_create,
)
from nuggets_app.collection.services.imports import topics_import
from nuggets_app.collection.services.nugget_banks import nugget_bank_import
from nuggets_app.judging.services.nuggets import nugget_save
from nuggets_app.models import Nugget, Topic
from tests import factories as f
from tests.integration.worlds.judging import build_world

PHRASE = "thermo-aeroelastic similarity"


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def test_a_new_aspect_gets_a_slug_of_its_label_and_its_author(world, assessor):
    aspect = aspect_create(
        user=assessor, topic=world.topic, text="  wind   tunnel\ttests "
    )
    stored = Topic.objects.get(pk=world.topic.pk).aspects
    assert (aspect["id"], aspect["text"]) == ("wind-tunnel-tests", "wind tunnel tests")
    assert (aspect["source"], aspect["created_by"]) == ("assessor", "alice")
    assert stored[-1] == aspect
    assert [a["id"] for a in stored] == ["a1", "a2", "wind-tunnel-tests"]
    second = aspect_create(user=assessor, topic=world.topic, text="flutter")
    assert second["id"] == "flutter"


@pytest.mark.parametrize(
    ("label", "slug"),
    [("2", "aspect-2"), ("1969", "aspect-1969"), ("???", "aspect"),
     ("Wind-tunnel tests!", "wind-tunnel-tests-2"), ("Prüfstände", "prüfstände")],
)  # fmt: skip
def test_a_new_aspect_id_is_never_a_bare_number_nor_one_taken(
    world, assessor, label, slug
):
    aspect_create(user=assessor, topic=world.topic, text="wind tunnel tests")
    assert aspect_create(user=assessor, topic=world.topic, text=label)["id"] == slug


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
    with pytest.raises(AspectError, match=message) as exc:
        aspect_create(user=assessor, topic=world.topic, text=label)
    assert exc.value.field == "aspect_text"
    assert len(Topic.objects.get(pk=world.topic.pk).aspects) == 2


def test_the_same_aspect_on_another_topic_is_its_own(world, assessor, other_assessor):
    aspect_create(user=assessor, topic=world.topic, text="flutter")
    other = aspect_create(user=other_assessor, topic=world.other_topic, text="flutter")
    assert other["id"] == "flutter"


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
    assert sorted(a["id"] for a in added) == sorted(
        f"aspect-{i}-{r}" for i in range(6) for r in range(3)
    )


def test_web09_topics_import_with_their_subtopics_as_aspects(shared_data, assessor):
    collection = f.CollectionFactory(name="web09")
    path = shared_data / "trec-web09-prels" / "topics.web.1-50.xml"
    topics_import(path=path, collection=collection)
    first = Topic.objects.get(collection=collection, qid="1")
    assert first.aspects[0] == {
        "id": "1",
        "text": 'Find the TIME magazine photo essay "Barack Obama\'s Family Tree".',
        "type": "nav",
        "source": "topics file",
    }
    assert [(a["id"], a["type"]) for a in first.aspects] == [
        ("1", "nav"),
        ("2", "inf"),
        ("3", "inf"),
    ]
    counts = [len(t.aspects) for t in Topic.objects.filter(collection=collection)]
    # The data README: 50 topics with 3-8 subtopics each.
    assert len(counts) == 50
    assert min(counts) >= 3
    assert max(counts) <= 8
    # An assessor's aspect gets a slug beside the file's numbers; a re-import keeps it.
    added = aspect_create(user=assessor, topic=first, text="Obama's father")
    assert added["id"] == "obamas-father"
    topics_import(path=path, collection=collection)
    first.refresh_from_db()
    assert [(a["id"], a["source"]) for a in first.aspects] == [
        ("1", "topics file"),
        ("2", "topics file"),
        ("3", "topics file"),
        ("obamas-father", "assessor"),
    ]


def _rag_sub_narratives(path):
    """Each topic's sub-narratives in first-seen order, outer quotes removed."""
    out = {}
    for row in map(json.loads, path.open()):
        listed = out.setdefault(str(row["qid"]), [])
        for nugget in row["nuggets"]:
            name = nugget["mapped_sub_narrative"].strip()
            if (
                len(name) > 1 and name[0] == name[-1] == '"'
            ):  # only a quoted whole: 'New: "x"' stays
                name = name[1:-1].strip()
            if name and name not in listed:
                listed.append(name)
    return out


def test_rag25_sub_narratives_become_aspects_of_existing_topics(shared_data, assessor):
    path = shared_data / "trec-rag25-nuggets" / "rag25-dev-nuggets.jsonl"
    expected = _rag_sub_narratives(path)
    collection = f.CollectionFactory(name="rag25")
    for qid in expected:
        f.TopicFactory(collection=collection, qid=qid, aspects=[])
    first = Topic.objects.get(collection=collection, qid=next(iter(expected)))
    mine = aspect_create(user=assessor, topic=first, text="my own angle")
    nugget_bank_import(path=path, collection=collection)
    nugget_bank_import(path=path, collection=collection)  # again: no duplicates
    for topic in Topic.objects.filter(collection=collection):
        from_bank = [a for a in topic.aspects if a.get("source") == "bank"]
        assert [a["id"] for a in from_bank] == expected[topic.qid]
        assert all(a["text"] == a["id"] for a in from_bank)
    first.refresh_from_db()
    assert first.aspects[0] == mine
    tagged = Nugget.objects.filter(topic__collection=collection).select_related("topic")
    assert all(n.aspect in [a["id"] for a in n.topic.aspects] for n in tagged)
