"""The Django admin: nugget offsets are checked as the assessor API checks them, and
model names read as English."""

import json

import pytest
from django.urls import reverse

from nuggets_app.models import Nugget
from tests import factories as f
from tests.integration.judging_world import build_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def _form(nugget: Nugget, **changes) -> dict:
    data = {
        "topic": nugget.topic_id, "assessor": nugget.assessor_id,
        "document": nugget.document_id, "start": nugget.start, "end": nugget.end,
        "span_text": nugget.span_text, "text": nugget.text,
        "keywords": json.dumps(nugget.keywords), "grade": nugget.grade or "",
        "aspect": nugget.aspect, "version": nugget.version,
    }  # fmt: skip
    data.update(changes)
    return data


def _nugget(world, assessor) -> Nugget:
    doc = world.docs["184"]
    end = doc.text.index(" .") + 2
    return f.NuggetFactory(
        topic=world.topic, document=doc, assessor=assessor, start=0, end=end
    )


def test_the_admin_refuses_an_end_that_no_longer_matches_the_span(
    world, assessor, staff_client
):
    nugget = _nugget(world, assessor)
    url = reverse("admin:nuggets_app_nugget_change", args=[nugget.pk])
    response = staff_client.post(url, _form(nugget, end=nugget.end + 11))
    assert response.status_code == 200  # the form again, with the error
    assert "differs from the document at [0, " in response.text
    nugget.refresh_from_db()
    assert nugget.document.text[nugget.start : nugget.end] == nugget.span_text
    outside = staff_client.post(url, _form(nugget, end=len(nugget.document.text) + 5))
    assert "is not inside the text" in outside.text

    # The assessor API says the same about the same span (422).
    staff_client.force_login(assessor)  # the same test client, now as the assessor
    api = staff_client.post(
        reverse("nugget-create", args=[world.assignment.pk, world.position("184")]),
        {
            "start": 0, "end": nugget.end + 11, "span_text": nugget.span_text,
            "text": "x", "client_uuid": "6f1c2b1e-8a56-4a53-9c1c-8b8d3a5f0e11",
        },
    )  # fmt: skip
    assert api.status_code == 422


def test_the_admin_saves_a_span_that_matches(world, assessor, staff_client):
    nugget = _nugget(world, assessor)
    text = nugget.document.text
    url = reverse("admin:nuggets_app_nugget_change", args=[nugget.pk])
    response = staff_client.post(
        url, _form(nugget, start=1, span_text=text[1 : nugget.end])
    )
    assert response.status_code == 302
    nugget.refresh_from_db()
    assert (nugget.start, nugget.span_text) == (1, text[1 : nugget.end])


def test_the_admin_index_says_run_entries(staff_client):
    page = staff_client.get(reverse("admin:index"))
    assert "Run entries" in page.text
    assert "entrys" not in page.text
