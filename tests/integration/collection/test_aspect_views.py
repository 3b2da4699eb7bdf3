"""Adding an aspect from the judging page: who may, what the page then shows."""

import pytest
from django.test import Client
from django.urls import reverse

from nuggets_app.models import Topic
from tests import factories as f
from tests.integration.worlds.judging import build_world


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def _add(client, assignment, text):
    return client.post(
        reverse("aspect-create", args=[assignment.pk]), {"aspect_text": text}
    )


def _aspect_ids(topic):
    return [a["id"] for a in Topic.objects.get(pk=topic.pk).aspects]


def test_the_assessor_adds_an_aspect_and_gets_the_topics_aspects(
    world, assessor_client
):
    response = _add(assessor_client, world.assignment, "wing flutter")
    body = response.json()
    assert response.status_code == 201
    assert body["aspect"]["id"] == "wing-flutter"
    assert body["aspect"]["created_by"] == "alice"
    assert [a["id"] for a in body["aspects"]] == ["a1", "a2", "wing-flutter"]
    assert _aspect_ids(world.topic) == ["a1", "a2", "wing-flutter"]


def test_a_duplicate_label_answers_409_with_the_existing_aspect(world, assessor_client):
    response = _add(assessor_client, world.assignment, "MODELS")
    assert response.status_code == 409
    assert response.json()["aspect"]["id"] == "a2"
    assert "already has the aspect 'a2'" in response.json()["error"]


def test_an_empty_label_is_refused_with_a_message(world, assessor_client):
    response = _add(assessor_client, world.assignment, "   ")
    assert response.status_code == 400
    assert response.json() == {
        "error": "the new aspect's label is empty",
        "field": "aspect_text",
    }


def test_an_assessor_of_another_topic_cannot_add_to_this_one(
    world, client, other_assessor
):
    client.force_login(other_assessor)
    response = _add(client, world.assignment, "wing flutter")
    assert response.status_code == 404
    assert _aspect_ids(world.topic) == ["a1", "a2"]


def test_an_assessor_of_another_collection_cannot_add(world, client):
    carol = f.UserFactory(username="carol")
    collection = f.CollectionFactory(name="elsewhere")
    topic = f.TopicFactory(collection=collection, qid="1")
    sample = f.SampleFactory(pool=f.PoolFactory(collection=collection))
    f.AssignmentFactory(sample=sample, topic=topic, assessor=carol)
    client.force_login(carol)
    response = _add(client, world.assignment, "wing flutter")
    assert response.status_code == 404
    assert _aspect_ids(world.topic) == ["a1", "a2"]


def test_anonymous_gets_401_and_nothing_changes(world):
    response = _add(Client(), world.assignment, "wing flutter")
    assert response.status_code == 401
    assert _aspect_ids(world.topic) == ["a1", "a2"]


def test_staff_may_add_to_any_assignments_topic(world, staff_client):
    response = _add(staff_client, world.assignment, "wing flutter")
    assert response.status_code == 201
    assert response.json()["aspect"]["created_by"] == "root"


def test_a_missing_csrf_token_is_refused(world, assessor):
    client = Client(enforce_csrf_checks=True)
    client.force_login(assessor)
    response = _add(client, world.assignment, "wing flutter")
    assert response.status_code == 403
    assert _aspect_ids(world.topic) == ["a1", "a2"]


def test_a_get_is_not_allowed(world, assessor_client):
    response = assessor_client.get(reverse("aspect-create", args=[world.assignment.pk]))
    assert response.status_code == 405


def test_the_new_aspect_is_escaped_in_every_assessors_page(
    world, assessor_client, client, other_assessor
):
    label = "<script>alert(1)</script> & co"
    assert _add(assessor_client, world.assignment, label).status_code == 201
    page = assessor_client.get(
        reverse("judge", args=[world.assignment.pk, world.position("184")])
    ).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert (
        '<option value="scriptalert1script-co">scriptalert1script-co: '
        "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in page
    )
    data = assessor_client.get(
        reverse("judge-data", args=[world.assignment.pk, world.position("184")])
    ).json()
    assert data["aspects"][-1]["text"] == label
    # Bob judges topic 2: his page lists topic 2's aspects, not topic 1's new one.
    client.force_login(other_assessor)
    other = client.get(
        reverse("judge", args=[world.other_assignment.pk, 1])
    ).content.decode()
    assert "alert(1)" not in other


def test_another_assessor_of_the_topic_sees_the_aspect_in_their_select(
    world, assessor_client, client, other_assessor
):
    assert _add(assessor_client, world.assignment, "wing flutter").status_code == 201
    bobs = f.AssignmentFactory(
        sample=world.assignment.sample, topic=world.topic, assessor=other_assessor
    )
    client.force_login(other_assessor)
    page = client.get(
        reverse("judge", args=[bobs.pk, world.position("184")])
    ).content.decode()
    assert '<option value="wing-flutter">wing-flutter: wing flutter' in page
    assert "<strong>wing-flutter</strong> wing flutter" in page
