"""The Django admin shows human work and statistical rows but never writes them (the
services are their one write path), and model names read as English."""

import pytest
from django.contrib import admin
from django.urls import reverse

from nuggets_app import models as m
from tests import factories as f
from tests.integration.worlds.judging import build_world

pytestmark = pytest.mark.django_db

READ_ONLY = [
    m.Judgment, m.Nugget, m.WorkChange, m.Assignment, m.Sample, m.SampleDocument,
    m.PoolDocument, m.MatchResult, m.MatchChunk, m.Qrels, m.QrelsEntry,
]  # fmt: skip


@pytest.fixture
def world(shared_data, assessor, other_assessor):
    return build_world(shared_data, assessor, other_assessor)


def _url(model, view: str, *args) -> str:
    meta = model._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_{view}", args=args)


@pytest.mark.parametrize("model", READ_ONLY, ids=lambda model: model.__name__)
def test_the_admin_refuses_to_add_change_or_delete_a_read_only_model(
    model, staff_client, rf, staff
):
    assert staff_client.get(_url(model, "add")).status_code == 403
    assert staff_client.get(_url(model, "changelist")).status_code == 200
    request = rf.get("/")
    request.user = staff
    model_admin = admin.site._registry[model]
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_delete_permission(request)


def test_a_posted_judgment_nugget_or_inclusion_probability_edit_changes_nothing(
    world, assessor, staff_client
):
    judgment = f.JudgmentFactory(
        topic=world.topic, document=world.docs["184"], assessor=assessor, relevance=1
    )
    nugget = f.NuggetFactory(
        topic=world.topic, document=world.docs["184"], assessor=assessor
    )
    item = world.assignment.sample.documents.first()
    prob = item.inclusion_prob
    posts = [
        (m.Judgment, judgment.pk, {"relevance": 7}),
        (m.Nugget, nugget.pk, {"text": "edited in the admin"}),
        (m.SampleDocument, item.pk, {"inclusion_prob": 0.001}),
    ]
    for model, pk, data in posts:
        # The change page is a view-only page, and a posted form is refused.
        page = staff_client.get(_url(model, "change", pk))
        assert page.status_code == 200
        assert "Save" not in page.text
        assert staff_client.post(_url(model, "change", pk), data).status_code == 403
        assert (
            staff_client.post(_url(model, "delete", pk), {"post": "yes"}).status_code
            == 403
        )
    judgment.refresh_from_db()
    nugget.refresh_from_db()
    item.refresh_from_db()
    assert (judgment.relevance, nugget.version, item.inclusion_prob) == (1, 1, prob)
    assert nugget.text != "edited in the admin"


def test_the_admin_index_says_run_entries(staff_client):
    page = staff_client.get(reverse("admin:index"))
    assert "Run entries" in page.text
    assert "entrys" not in page.text
