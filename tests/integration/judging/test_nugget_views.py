"""Nugget autosave endpoints and the live match preview, through the test client."""

import uuid

import pytest
from django.urls import reverse

from assessor_ui.views.judge import nugget_json
from nuggets_app.models import Nugget
from tests import factories as f
from tests.integration.worlds.judging import build_world

PHRASE = "thermo-aeroelastic similarity"


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def _create(client, world, **overrides):
    doc = world.docs["184"]
    start = doc.text.index(PHRASE)
    data = {
        "start": start,
        "end": start + len(PHRASE),
        "span_text": PHRASE,
        "client_uuid": str(uuid.uuid4()),
    }
    data.update(overrides)
    url = reverse("nugget-create", args=[world.assignment.pk, world.position("184")])
    return client.post(url, data)


def test_a_selection_becomes_a_nugget_whose_text_starts_as_the_span(
    world, assessor_client
):
    response = _create(assessor_client, world)
    body = response.json()
    assert response.status_code == 201
    assert (body["span_text"], body["text"], body["version"]) == (PHRASE, PHRASE, 1)
    doc = world.docs["184"]
    assert doc.text[body["start"] : body["end"]] == PHRASE


def test_a_retried_create_returns_the_same_nugget(world, assessor_client):
    key = str(uuid.uuid4())
    first = _create(assessor_client, world, client_uuid=key)
    again = _create(assessor_client, world, client_uuid=key)
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]
    assert Nugget.objects.count() == 1


def test_a_drifted_span_is_refused_with_422(world, assessor_client):
    response = _create(
        assessor_client, world, span_text="thermo aeroelastic similarity"
    )
    assert response.status_code == 422
    assert response.json()["field"] == "span_text"
    assert not Nugget.objects.exists()


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"start": "x"}, "start"),
        ({"client_uuid": "nope"}, "client_uuid"),
        ({"grade": 9}, "grade"),
    ],
)
def test_bad_creates_name_the_field(world, assessor_client, data, field):
    response = _create(assessor_client, world, **data)
    assert response.status_code == 400
    assert response.json()["field"] == field
    assert not Nugget.objects.exists()


def test_edit_then_conflict_from_a_stale_tab(world, assessor_client):
    nugget = _create(assessor_client, world).json()
    url = reverse("nugget-edit", args=[nugget["id"]])
    data = {
        "version": 1,
        "text": "similarity needs identical model",
        "keywords": '["model"]',
    }
    edited = assessor_client.post(url, {**data, "grade": 2, "aspect": "a1"}).json()
    assert (edited["text"], edited["keywords"], edited["version"]) == (
        data["text"],
        ["model"],
        2,
    )
    stale = assessor_client.post(url, {**data, "text": "old tab"})
    assert stale.status_code == 409
    assert stale.json()["current"]["text"] == data["text"]
    assert Nugget.objects.get().text == data["text"]


def test_nugget_saves_run_few_queries_and_answer_what_is_stored(
    world, assessor, assessor_client, django_assert_num_queries
):
    # User, assignment, queue item, one read for a replay or a duplicate span, insert
    # and its history in a transaction (a savepoint and its release inside the test's),
    # the topic's nugget texts (a twin's warning).
    with django_assert_num_queries(9):
        created = _create(assessor_client, world).json()
    url = reverse("nugget-edit", args=[created["id"]])
    # User, the nugget, the conditional update and its history (in a savepoint), the
    # texts; the answer is not read back.
    with django_assert_num_queries(7):
        edited = assessor_client.post(
            url, {"version": 1, "text": "model similarity", "keywords": '["model"]'}
        ).json()
    stored = nugget_json(Nugget.objects.get(pk=created["id"]), assessor, saved=True)
    assert edited == {**stored, "warning": ""}
    assert (stored["version"], stored["keywords"]) == (2, ["model"])
    # The same span again is refused, whatever its uuid.
    again = _create(assessor_client, world)
    assert (again.status_code, again.json()["field"]) == (409, "span_text")


def test_other_assessor_gets_404_on_edit_and_delete(
    world, client, assessor, other_assessor
):
    nugget = f.NuggetFactory(
        topic=world.topic, document=world.docs["184"], assessor=assessor
    )
    client.force_login(other_assessor)
    edit = client.post(
        reverse("nugget-edit", args=[nugget.pk]), {"version": 1, "text": "x"}
    )
    delete = client.post(reverse("nugget-delete", args=[nugget.pk]), {"version": 1})
    assert (edit.status_code, delete.status_code) == (404, 404)
    # Refusals of the JSON endpoints are JSON too, as the README documents.
    for response in (edit, delete):
        assert response["Content-Type"] == "application/json"
        assert set(response.json()) == {"error", "field"}
    nugget.refresh_from_db()
    assert nugget.text != "x"


def test_delete_removes_the_nugget(world, assessor_client):
    nugget = _create(assessor_client, world).json()
    response = assessor_client.post(
        reverse("nugget-delete", args=[nugget["id"]]), {"version": 1}
    )
    assert response.json() == {"deleted": nugget["id"]}
    assert not Nugget.objects.exists()


def test_the_page_lists_topic_nuggets_with_their_match_score(
    world, assessor_client, other_assessor
):
    # Bob's nugget of topic 1 is shared with Alice (NUGGETS_SHARED); its words occur in
    # document 184 within one window, so the matcher scores it 1.0 there.
    f.NuggetFactory(
        topic=world.topic, document=world.docs["12"], assessor=other_assessor,
        start=0, end=10, text="complete similarity obtains",
    )  # fmt: skip
    url = reverse("judge", args=[world.assignment.pk, world.position("184")])
    html = assessor_client.get(url).content.decode()
    assert '"text": "complete similarity obtains"' in html
    assert '"assessor": "bob", "mine": false, "score": 1.0' in html


def test_others_nuggets_are_hidden_when_sharing_is_off(
    world, client, settings, other_assessor
):
    settings.NUGGETS_SHARED = False
    f.NuggetFactory(
        topic=world.topic, document=world.docs["12"], assessor=other_assessor,
        text="flutter of heated wings",
    )  # fmt: skip
    client.force_login(world.assignment.assessor)
    html = client.get(reverse("judge", args=[world.assignment.pk, 1])).content.decode()
    assert "flutter of heated wings" not in html


def test_preview_counts_judged_documents_a_draft_would_match(
    world, assessor_client, assessor
):
    # Cranfield 184 and 12 are judged relevant, 1 and 2 non-relevant. "boundary layer"
    # (or "boundary-layer") occurs in 12, 1 and 2, not in 184; only 2 says "hypersonic".
    for docno, rel in (("184", 2), ("12", 1), ("1", 0), ("2", 0)):
        f.JudgmentFactory(
            topic=world.topic,
            document=world.docs[docno],
            assessor=assessor,
            relevance=rel,
        )
    url = reverse("nugget-preview", args=[world.assignment.pk])
    counts = assessor_client.get(url, {"text": "boundary layer"}).json()
    assert counts == {
        "relevant": 1, "nonrelevant": 2, "judged_relevant": 2, "judged_nonrelevant": 2,
    }  # fmt: skip
    counts = assessor_client.get(url, {"text": "thermo-aeroelastic similarity"}).json()
    assert (counts["relevant"], counts["nonrelevant"]) == (1, 0)
    # A keyword the documents lack stops every match.
    gated = assessor_client.get(
        url, {"text": "boundary layer", "keywords": '["hypersonic"]'}
    )
    assert (gated.json()["relevant"], gated.json()["nonrelevant"]) == (0, 1)
    gated = assessor_client.get(
        url, {"text": "boundary layer", "keywords": '["helicopter"]'}
    )
    assert gated.json()["nonrelevant"] == 0


def test_a_nugget_with_the_text_of_another_in_the_topic_is_saved_with_a_warning(
    world, assessor_client, client, other_assessor
):
    first = _create(assessor_client, world).json()
    assert first["warning"] == ""
    # Bob's nugget of another span, then worded as Alice's (case and spacing aside).
    bobs = f.AssignmentFactory(
        sample=world.assignment.sample, topic=world.topic, assessor=other_assessor
    )
    client.force_login(other_assessor)
    doc = world.docs["184"]
    words = " ".join(doc.text.split()[3:6])
    start = doc.text.index(words)
    url = reverse("nugget-create", args=[bobs.pk, world.position("184")])
    second = client.post(
        url,
        {
            "start": start,
            "end": start + len(words),
            "span_text": words,
            "client_uuid": str(uuid.uuid4()),
        },
    )
    assert second.json()["warning"] == ""
    edit = reverse("nugget-edit", args=[second.json()["id"]])
    answer = client.post(edit, {"version": 1, "text": f"  {PHRASE.upper()} "}).json()
    assert answer["warning"] == (
        f"the same text as nugget {first['id']} (alice) in this topic: "
        "reword it, or delete one"
    )
    assert Nugget.objects.get(pk=second.json()["id"]).text == f"{PHRASE.upper()}"
