"""The judging API: a grade conflict answers the stored grade, who made it and when;
the history of a document is shown to its assessor and to staff; undo is the
assessor's."""

import pytest
from django.urls import reverse

from nuggets_app.models import Judgment
from tests.integration.worlds.judging import build_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def _urls(world) -> dict[str, str]:
    args = [world.assignment.pk, world.position("184")]
    names = ("judgment-save", "work-history", "work-undo")
    return {name: reverse(name, args=args) for name in names}


def test_a_stale_grade_is_answered_409_with_the_stored_one(world, assessor_client):
    urls = _urls(world)
    first = assessor_client.post(urls["judgment-save"], {"relevance": 1, "version": 0})
    assert first.json()["version"] == 1
    stale = assessor_client.post(urls["judgment-save"], {"relevance": 0, "version": 0})
    assert stale.status_code == 409
    body = stale.json()
    assert body["field"] == "version"
    assert {k: body["current"][k] for k in ("relevance", "version", "by")} == {
        "relevance": 1, "version": 1, "by": "alice",
    }  # fmt: skip
    assert Judgment.objects.get().relevance == 1
    # Without a version (an older client) the grade is set, as before.
    assert (
        assessor_client.post(urls["judgment-save"], {"relevance": 0}).status_code == 200
    )


def test_the_history_is_shown_to_the_assessor_and_staff_not_to_others(
    world, client, assessor, other_assessor, staff
):
    urls = _urls(world)
    client.force_login(assessor)
    client.post(urls["judgment-save"], {"relevance": 2, "version": 0})
    mine = client.get(urls["work-history"]).json()
    assert mine["judgment"]["relevance"] == 2
    assert [(c["what"], c["to"], c["by"]) for c in mine["changes"]] == [
        ("grade", 2, "alice")
    ]
    client.force_login(staff)
    assert client.get(urls["work-history"]).json()["changes"] == mine["changes"]
    assert client.post(urls["work-undo"]).status_code == 404  # staff: read-only here
    client.force_login(other_assessor)
    assert client.get(urls["work-history"]).status_code == 404
    assert client.post(urls["work-undo"]).status_code == 404
    assert Judgment.objects.get().relevance == 2


def test_undo_takes_back_the_last_grade_then_says_nothing_is_left(
    world, assessor_client
):
    urls = _urls(world)
    assessor_client.post(urls["judgment-save"], {"relevance": 1, "version": 0})
    assessor_client.post(urls["judgment-save"], {"relevance": 0, "version": 1})
    undone = assessor_client.post(urls["work-undo"]).json()
    assert undone["undone"]["kind"] == "judgment"
    assert (undone["judgment"]["relevance"], undone["judgment"]["version"]) == (1, 3)
    assert undone["changes"][0]["undo"] is True
    assert undone["changes"][1]["undone"] is True
    assessor_client.post(urls["work-undo"])
    last = assessor_client.post(urls["work-undo"])
    assert last.status_code == 409
    assert last.json()["error"] == "nothing left to undo on this document"
