"""The pages that resolve and check several assessors' work, through the test client:
staff only, the adjudication queue and its save, guidelines (sanitized, versioned,
recorded by each judgment, shown on the judging page), the assessors page, the
workload, and the collection's aggregation rule."""

from __future__ import annotations

import pytest
from django.urls import reverse

from nuggets_app.judging.services.judgments import judgment_record
from nuggets_app.models import (
    Adjudication,
    Assignment,
    Guidelines,
    Judgment,
    KnownAnswer,
)
from tests.integration.worlds.judging import build_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    world = build_world(shared_data, assessor, other_assessor)
    Assignment.objects.create(
        sample=world.assignment.sample, topic=world.topic, assessor=other_assessor
    )
    for person, grade in ((assessor, 2), (other_assessor, 0)):
        judgment_record(
            assessor=person, topic=world.topic, document=world.docs["184"],
            relevance=grade, active_seconds_delta=30,
        )  # fmt: skip
    judgment_record(
        assessor=assessor, topic=world.topic, document=world.docs["29"], relevance=1
    )
    judgment_record(
        assessor=other_assessor, topic=world.topic, document=world.docs["29"],
        relevance=1,
    )  # fmt: skip
    return world


def _urls(world) -> list[str]:
    name = world.collection.name
    return [
        reverse("staff-adjudication", args=[name]),
        reverse("staff-adjudication-item", args=[name]) + "?qid=1&docno=184",
        reverse("staff-guidelines", args=[name]),
        reverse("staff-assessor-quality", args=[name]),
        reverse("staff-workload"),
    ]


def test_every_page_is_refused_to_an_assessor(world, assessor_client):
    for url in _urls(world):
        assert assessor_client.get(url).status_code == 403, url
    name = world.collection.name
    for route in (
        "staff-adjudication-save",
        "staff-aggregation",
        "staff-known-answers",
    ):
        response = assessor_client.post(reverse(route, args=[name]), {})
        assert response.status_code == 403, route
    assert not Adjudication.objects.exists()


def test_the_queue_shows_the_disagreement_and_the_save_moves_on(world, client, staff):
    client.force_login(staff)
    name = world.collection.name
    page = client.get(reverse("staff-adjudication", args=[name]))
    text = page.content.decode()
    assert 'data-docno="184"' in text
    assert 'data-docno="29"' not in text  # both said relevant
    assert "alice 2, bob 0" in text
    item = client.get(_urls(world)[1]).content.decode()
    assert 'data-assessor="alice"' in item
    assert 'data-assessor="bob"' in item
    response = client.post(
        reverse("staff-adjudication-save", args=[name]),
        {
            "qid": "1",
            "docno": "184",
            "relevance": 1,
            "version": 0,
            "filters": "open=on",
        },
    )
    assert response.status_code == 302
    # The only open disagreement is decided: back to the (filtered) queue.
    assert response["Location"].endswith(
        reverse("staff-adjudication", args=[name]) + "?open=on"
    )
    decision = Adjudication.objects.get()
    assert (decision.relevance, decision.adjudicator, decision.version) == (1, staff, 1)
    stale = client.post(
        reverse("staff-adjudication-save", args=[name]),
        {"qid": "1", "docno": "184", "relevance": 0, "version": 0},
        follow=True,
    )
    assert "Not saved: the decision is at version 1, not 0" in stale.content.decode()
    assert Adjudication.objects.get().relevance == 1
    filtered = client.get(
        reverse("staff-adjudication", args=[name]), {"assessor": "carol"}
    )
    assert "No disagreement under these filters" in filtered.content.decode()
    agreement = client.get(reverse("agreement")).content.decode()
    assert 'id="adjudicated-agreement"' in agreement


def test_guidelines_are_versioned_sanitized_and_recorded_by_judgments(
    world, client, staff, assessor
):
    client.force_login(staff)
    url = reverse("staff-guidelines", args=[world.collection.name])
    client.post(url, {"text": "# Relevant\n\nA document is *relevant* when..."})
    client.post(
        url,
        {
            "text": "Only **methods** count.<script>alert(1)</script>[x](javascript:alert(2))"
        },
    )
    assert list(Guidelines.objects.values_list("version", flat=True)) == [2, 1]
    page = client.get(url).content.decode()
    assert "<strong>methods</strong>" in page
    assert "<script>alert" not in page
    assert 'href="javascript' not in page
    client.force_login(assessor)
    judge = client.get(
        reverse("judge", args=[world.assignment.pk, world.position("31")])
    ).content.decode()
    assert 'id="guidelines-version">2<' in judge
    assert "<strong>methods</strong>" in judge
    response = client.post(
        reverse("judgment-save", args=[world.assignment.pk, world.position("31")]),
        {"relevance": 1, "seconds": 2},
    )
    assert response.status_code == 200
    made = Judgment.objects.get(assessor=assessor, document=world.docs["31"])
    assert made.guidelines_version == 2
    assert Judgment.objects.get(
        assessor=assessor, document=world.docs["184"]
    ).guidelines_version is None  # fmt: skip


def test_the_assessors_page_and_the_workload(world, client, staff):
    KnownAnswer.objects.create(
        topic=world.topic, document=world.docs["184"], relevance=0, source="adjudicated"
    )
    client.force_login(staff)
    page = client.get(
        reverse("staff-assessor-quality", args=[world.collection.name]), {"level": 0.9}
    ).content.decode()
    assert 'data-assessor="alice"' in page
    assert 'id="known-count">1<' in page
    work = client.get(reverse("staff-workload")).content.decode()
    # Alice: topic 1 (7 documents) and nothing of topic 2; bob: both topics.
    assert '<td class="num assigned">7</td><td class="num judged">2</td>' in work
    assert '<td class="num assigned">10</td><td class="num judged">2</td>' in work


def test_the_flag_note_shows_only_where_it_applies(world, client, staff, assessor):
    url = reverse("staff-assessor-quality", args=[world.collection.name])
    client.force_login(staff)
    # No check of a known answer judged: nobody can be flagged, no note.
    page = client.get(url).content.decode()
    assert 'data-assessor="alice"' in page
    assert "Flagged:" not in page
    assert 'id="flag-note"' not in page
    # Alice judged a known answer as a check, and agreed with it.
    known = KnownAnswer.objects.create(
        topic=world.topic, document=world.docs["29"], relevance=0, source="adjudicated"
    )
    Judgment.objects.create(
        topic=world.topic, document=world.docs["29"], assessor=assessor,
        relevance=0, quality_check=True,
    )  # fmt: skip
    page = client.get(url).content.decode()
    assert "Flagged:" not in page
    assert "Nobody's agreement with the known answers is below 0.80." in page
    # The known grade was 2: she is flagged, and the note says why.
    known.relevance = 2
    known.save()
    page = client.get(url).content.decode()
    assert 'class="flagged"' in page
    assert "Flagged: agreement with the known answers below 0.80." in page


def test_the_collection_rule_is_set_from_its_page(world, client, staff):
    client.force_login(staff)
    name = world.collection.name
    client.post(
        reverse("staff-aggregation", args=[name]),
        {"rule": "majority", "primary": "", "ties": "lower", "fallback": "highest"},
    )
    world.collection.refresh_from_db()
    assert world.collection.aggregation["rule"] == "majority"
    refused = client.post(
        reverse("staff-aggregation", args=[name]),
        {"rule": "primary", "primary": "", "ties": "higher", "fallback": "highest"},
        follow=True,
    )
    assert (
        "Not changed: the primary rule needs a primary assessor"
        in refused.content.decode()
    )
    page = client.get(reverse("staff-collection", args=[name])).content.decode()
    assert "the grade most assessors gave (ties to the lower grade)" in page
